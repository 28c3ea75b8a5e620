import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsafeAddressError } from '../errors.ts';
import { parsePage } from '../parse/parse-page.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { SafeResolver } from '../safety/safe-resolver.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { BrowserFetcher } from './browser-fetcher.ts';

const JS_PAGE = `<!doctype html><html><body><h1>Jobs</h1><ul id="jobs"></ul>
<script>
  const jobs = [{ id: 1, title: 'Rust engineer' }, { id: 2, title: 'Kafka operator' }, { id: 3, title: 'SRE' }];
  setTimeout(() => {
    for (const j of jobs) {
      const li = document.createElement('li');
      li.className = 'job';
      li.innerHTML = '<a href="/jobs/' + j.id + '">' + j.title + '</a>';
      document.getElementById('jobs').appendChild(li);
    }
  }, 50);
</script></body></html>`;

const SNEAKY_PAGE = `<!doctype html><html><body><p id="out">pending</p>
<script>
  fetch('http://10.1.2.3/secret').then(() => 'leaked', () => 'blocked').then((r) => { document.getElementById('out').textContent = r; });
</script></body></html>`;

let server: LocalServer;
let browser: BrowserFetcher;

beforeAll(async () => {
  server = await startLocalServer({
    '/js/jobs': (_q, r) => r.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(JS_PAGE),
    '/sneaky': (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(SNEAKY_PAGE),
    '/to-metadata': (_q, r) => r.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/hop': (_q, r) => r.writeHead(302, { location: '/js/jobs' }).end(),
    '/busy': (_q, r) => r.writeHead(503, { 'retry-after': '3', 'content-type': 'text/html' }).end('<p>busy</p>'),
  });
  browser = await BrowserFetcher.launch({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), concurrency: 2, recycleAfter: 2, navigationTimeoutMs: 10_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('BrowserFetcher with the system Chromium', () => {
  it('renders a page whose items exist only after JavaScript runs, and the items are extracted', async () => {
    const url = `${server.origin}/js/jobs`;
    const r = await browser.fetch(url, { waitForSelector: 'li.job' });
    expect(r).toMatchObject({ status: 200, renderMode: 'browser', isHtml: true, finalUrl: url });
    const spec = testSpec({ item_root: 'li.job', item_fields: [{ name: 'title', selector: 'a', attribute: null, xpath: null, transforms: [] }, { name: 'link', selector: 'a', attribute: 'href', xpath: null, transforms: [] }] });
    const page = parsePage({ html: r.body!, url, finalUrl: r.finalUrl, spec });
    expect(page.items.map((i) => i.fields.title)).toEqual(['Rust engineer', 'Kafka operator', 'SRE']);
    expect(page.links).toEqual([`${server.origin}/jobs/1`, `${server.origin}/jobs/2`, `${server.origin}/jobs/3`]);
  });

  it('records redirects and error statuses like the HTTP fetcher', async () => {
    const r = await browser.fetch(`${server.origin}/hop`);
    expect(r.finalUrl).toBe(`${server.origin}/js/jobs`);
    expect(r.redirects).toEqual([`${server.origin}/hop`]);
    const busy = await browser.fetch(`${server.origin}/busy`);
    expect(busy).toMatchObject({ status: 503, retryAfterMs: 3000, body: null });
  });

  it('refuses an unsafe URL before navigating, and a redirect hop to the metadata address', async () => {
    await expect(browser.fetch('http://10.0.0.1/')).rejects.toBeInstanceOf(UnsafeAddressError);
    await expect(browser.fetch(`${server.origin}/to-metadata`)).rejects.toBeInstanceOf(UnsafeAddressError);
  });

  it('blocks requests a page script makes to private addresses', async () => {
    const r = await browser.fetch(`${server.origin}/sneaky`, { waitForSelector: '#out:not(:empty)' });
    expect(r.body).toMatch(/<p id="out">blocked<\/p>/);
  });

  it('sends all browser traffic through the pinned egress proxy (Chromium never resolves names itself)', async () => {
    const resolver = new SafeResolver(new AddressPolicy(parseAllowList('127.0.0.1/32')), {
      resolve: async (h) => (h === 'jobs.pinned.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }]),
    });
    const b = await BrowserFetcher.launch({ resolver, concurrency: 1 });
    try {
      const r = await b.fetch(`http://jobs.pinned.test:${server.port}/js/jobs`, { waitForSelector: 'li.job' });
      expect(r.body).toContain('Kafka operator');
      await expect(b.fetch(`http://intranet.test:${server.port}/js/jobs`)).rejects.toBeInstanceOf(UnsafeAddressError);
    } finally {
      await b.close();
    }
  }, 30_000);

  it('keeps working across tab recycling, rendering in parallel, and counts what is pending for its metrics', async () => {
    const renders = Array.from({ length: 6 }, () => browser.fetch(`${server.origin}/js/jobs`, { waitForSelector: 'li.job' }));
    expect(browser.usage()).toEqual({ pending: 6, tabs: 2 });
    const results = await Promise.all(renders);
    expect(results.every((r) => r.body!.includes('Kafka operator'))).toBe(true);
    expect(browser.usage()).toEqual({ pending: 0, tabs: 2 });
  });

  it('closes cleanly and refuses work afterwards', async () => {
    const b = await BrowserFetcher.launch({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), concurrency: 1 });
    await b.fetch(`${server.origin}/js/jobs`);
    await b.close();
    await expect(b.fetch(`${server.origin}/js/jobs`)).rejects.toMatchObject({ code: 'TRAWL_FETCHER_CLOSED' });
  }, 30_000);
});
