import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from './test-site.ts';

let site: TestSite;
beforeAll(async () => {
  site = await createTestSite({ pages: 13, linksPerPage: 3, traps: true, slowMs: 200 });
});
afterAll(() => site.close());

const get = async (url: string, init?: RequestInit) => {
  const r = await fetch(url, { redirect: 'manual', ...init });
  return { status: r.status, location: r.headers.get('location'), type: r.headers.get('content-type'), body: await r.text() };
};

describe('generated test site', () => {
  it('computes the expected URL set from its definition, by depth', () => {
    const o = site.origin;
    expect(site.expected(0).requested).toEqual([`${o}/`]);
    const d1 = site.expected(1);
    expect(d1.fetched).toEqual(
      [`${o}/`, `${o}/p/1`, `${o}/p/2`, `${o}/p/3`, site.traps.redirectChain, site.traps.flaky, site.traps.pdf, `${o}/calendar/2026/01`].sort(),
    );
    expect(d1.failed).toEqual([site.traps.redirectLoop, site.traps.always503, site.traps.slow, site.traps.huge, site.traps.robotsDisallowed].sort());
    expect(d1.neverServed).toEqual([site.traps.robotsDisallowed, site.traps.offHost]);
    expect(d1.notRequested).toEqual([site.traps.offHost]);
    const d2 = site.expected(2);
    expect(d2.fetched).toContain(`${o}/q?id=4&kind=page`);
    expect(d2.fetched).toContain(`${o}/calendar/2026/02`);
    expect(d2.fetched.filter((u) => u.includes('/p/') || u.includes('/q?')).length).toBe(12);
    expect(d2.items).toBe(13 * 2);
  });

  it('links each child in disguise too (fragment, utm, reordered query)', async () => {
    const home = await get(site.home);
    expect(home.body).toContain('href="/p/1?utm_source=test&amp;utm_medium=link"');
    expect(home.body).toContain('href="/p/2#section-2"');
    const p1 = await get(`${site.origin}/p/1`);
    expect(p1.body).toContain('href="/q?kind=page&amp;id=4"');
    expect((await get(`${site.origin}/q?kind=page&id=4`)).status).toBe(200);
  });

  it('serves the traps', async () => {
    expect(await get(site.traps.redirectChain)).toMatchObject({ status: 301, location: '/trap/redirect-chain/2' });
    expect(await get(site.traps.redirectLoop)).toMatchObject({ status: 302, location: '/trap/redirect-loop/b' });
    expect(await get(`${site.origin}/trap/redirect-loop/b`)).toMatchObject({ location: '/trap/redirect-loop' });
    expect((await get(site.traps.calendar)).body).toContain('/calendar/2026/02');
    expect((await get(`${site.origin}/calendar/2027/12`)).body).toContain('/calendar/2028/01');
    expect((await get(site.traps.always503)).status).toBe(503);
    expect((await get(site.traps.pdf)).type).toBe('application/pdf');
    expect((await get(`${site.origin}/robots.txt`)).body).toContain('Disallow: /private/');
    const huge = await fetch(site.traps.huge);
    expect(Number(huge.headers.get('content-length'))).toBe(20 * 1024 * 1024);
    await huge.body?.cancel();
  });

  it('fails the flaky page twice then succeeds, until reset', async () => {
    expect((await get(site.traps.flaky)).status).toBe(500);
    expect((await get(site.traps.flaky)).status).toBe(500);
    expect((await get(site.traps.flaky)).status).toBe(200);
    site.reset();
    expect((await get(site.traps.flaky)).status).toBe(500);
  });

  it('answers the slow page only after slowMs', async () => {
    const t0 = Date.now();
    await get(site.traps.slow);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('answers content pages setLatency later, until it is set back to 0', async () => {
    site.setLatency(1_000);
    try {
      const t0 = Date.now();
      expect((await get(`${site.origin}/p/2`)).status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(990);
    } finally {
      site.setLatency(0);
    }
    const t1 = Date.now();
    expect((await get(`${site.origin}/p/2`)).status).toBe(200);
    expect(Date.now() - t1).toBeLessThan(990);
  });

  it('tells off-host requests apart by Host, in the access log', async () => {
    site.reset();
    const r = await get(`${site.origin}/p/3`, { headers: {} });
    expect(r.status).toBe(200);
    expect(site.accessLog.entries()).toEqual([expect.objectContaining({ method: 'GET', path: '/p/3', host: `127.0.0.1:${site.port}` })]);
    expect(site.traps.offHost).toBe(`http://localhost:${site.port}/offhost`);
  });
});

describe('validators and conditional requests', () => {
  const conditional = (url: string, headers: Record<string, string>) => fetch(url, { headers });

  it('gives page i an ETag and a Last-Modified by i % 3, and answers a matching condition with 304', async () => {
    site.reset();
    const both = await fetch(site.urlOf(3));
    const etagOnly = await fetch(site.urlOf(1));
    const dateOnly = await fetch(site.urlOf(2));
    expect([both.headers.get('etag'), both.headers.get('last-modified')]).toEqual(['"p3-r1"', 'Thu, 01 Jan 2026 00:00:00 GMT']);
    expect([etagOnly.headers.get('etag'), etagOnly.headers.get('last-modified')]).toEqual(['"p1-r1"', null]);
    expect([dateOnly.headers.get('etag'), dateOnly.headers.get('last-modified')]).toEqual([null, 'Thu, 01 Jan 2026 00:00:00 GMT']);

    expect((await conditional(site.urlOf(3), { 'if-none-match': '"p3-r1"' })).status).toBe(304);
    expect((await conditional(site.urlOf(1), { 'if-none-match': 'W/"p1-r1"' })).status).toBe(304);
    expect((await conditional(site.urlOf(2), { 'if-modified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' })).status).toBe(304);
    // If-None-Match decides when it is sent: a wrong tag is a 200 whatever the date says.
    expect((await conditional(site.urlOf(3), { 'if-none-match': '"p3-r0"', 'if-modified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' })).status).toBe(200);
    expect((await conditional(site.urlOf(2), { 'if-modified-since': 'Wed, 31 Dec 2025 23:59:59 GMT' })).status).toBe(200);

    const log = site.accessLog.entries();
    expect(log[3]).toMatchObject({ path: '/p/3', ifNoneMatch: '"p3-r1"', ifModifiedSince: null, status: 304 });
    expect(log[0]).toMatchObject({ path: '/p/3', ifNoneMatch: null, status: 200 });
    // A 304 is its status line and headers; the 200 carries the page besides.
    expect(log[3]!.bytes).toBeGreaterThan(50);
    expect(log[0]!.bytes - log[3]!.bytes).toBeGreaterThan(400);
  });

  it('gives a changed page a new revision: new text, new ETag, a later Last-Modified, and a 200 for the old validators', async () => {
    const before = await (await fetch(site.urlOf(6))).text();
    expect(site.change([6])).toEqual([site.urlOf(6)]);
    const after = await fetch(site.urlOf(6), { headers: { 'if-none-match': '"p6-r1"' } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).toBe('"p6-r2"');
    expect(Date.parse(after.headers.get('last-modified')!)).toBeGreaterThan(Date.UTC(2026, 0, 1));
    const text = await after.text();
    expect(text).not.toBe(before);
    expect(text).toContain('revision 2');
    expect((await conditional(site.urlOf(6), { 'if-modified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' })).status).toBe(200);
    expect((await conditional(site.urlOf(6), { 'if-none-match': '"p6-r2"' })).status).toBe(304);
  });

  it('pads pages to pageBytes and counts the bytes it sends', async () => {
    const padded = await createTestSite({ pages: 4, pageBytes: 20_000, validators: false });
    try {
      const r = await fetch(padded.urlOf(1));
      expect(r.headers.get('etag')).toBeNull();
      const body = await r.text();
      expect(body.length).toBeGreaterThan(19_000);
      expect(body.length).toBeLessThan(21_000);
      expect(body).toContain('<article class="item">');
      expect(padded.bytesSent()).toBeGreaterThan(body.length);
    } finally {
      await padded.close();
    }
  });
});
