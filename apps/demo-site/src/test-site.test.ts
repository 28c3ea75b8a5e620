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

  it('tells off-host requests apart by Host, in the access log', async () => {
    site.reset();
    const r = await get(`${site.origin}/p/3`, { headers: {} });
    expect(r.status).toBe(200);
    expect(site.accessLog.entries()).toEqual([expect.objectContaining({ method: 'GET', path: '/p/3', host: `127.0.0.1:${site.port}` })]);
    expect(site.traps.offHost).toBe(`http://localhost:${site.port}/offhost`);
  });
});
