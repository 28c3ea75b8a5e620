/**
 * `POST /scrape` and `POST /map` end to end through the public API (issue 35): the API, a frontier,
 * a worker and the Postgres projector as processes on the real stack. A scrape is a job of one page
 * answered with every format asked for (the browser's screenshot included); a tiny `timeout_ms`
 * answers 202 with a job that completes and whose result is then read; bad input is a 400 with its
 * code; a map gives the site's sitemap URLs and links, filtered and bounded. Firecrawl's own SDK
 * (`@mendable/firecrawl-js` from the npm registry), pointed at Trawl, scrapes, maps and crawls the
 * same sites. A worker SIGKILLed in the middle of a scrape's fetch costs the answer nothing but time.
 */
import Firecrawl from '@mendable/firecrawl-js';
import { createSitemapSite, createTestSite, type SitemapSite, type TestSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Child, Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

let site: TestSite;
let sitemaps: SitemapSite;
let pipeline: Pipeline;
let base: string;
let key: string;
let worker: Child;

let api: Api;
let until: Until;

beforeAll(async () => {
  site = await createTestSite({ pages: 6, linksPerPage: 3, itemsPerPage: 1, traps: false });
  sitemaps = await createSitemapSite({ pages: 12, bigUrls: 50, bombBytes: 64 * 1024 });
  // A killed worker's partitions move on within seconds, not the default 30 s.
  ({ pipeline, base, key, api, until, worker } = await startApiPipeline({ env: { TRAWL_SESSION_TIMEOUT_MS: '6000' }, users: ['scraper'] }));
  // The API's live subscription joins in the background: until it has its partitions a scrape is
  // answered from the read model (without links). Wait for an answer that came the live way.
  await until(() => api('POST', '/scrape', { url: site.urlOf(5), formats: ['links'] }), (r) => r.status === 200 && Array.isArray((r.body.formats as Record<string, unknown>).links), 60_000, 'a scrape answered by the live subscription', );
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  await sitemaps?.close();
});

describe('POST /scrape', () => {
  it('answers with the page in every text format, its links and metadata, as a job of one page', async () => {
    const started = Date.now();
    const res = await api('POST', '/scrape', { url: site.home, formats: ['markdown', 'html', 'text', 'links', 'metadata'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body as { job_id: string; ok: boolean; status: number; final_url: string; metadata: Record<string, unknown>; formats: Record<string, unknown> };
    expect(body).toMatchObject({ ok: true, status: 200, final_url: site.home, url: site.home });
    expect(body.metadata).toMatchObject({ title: 'Page 0', status_code: 200, render_mode: 'http' });
    expect(body.formats.markdown).toContain('Page 0');
    expect(body.formats.html).toContain('<h1>Page 0</h1>');
    // Main content: the page's items, its heading (boilerplate) left out.
    expect(body.formats.text).toContain('Item 1 of page 0');
    expect(body.formats.links).toEqual(expect.arrayContaining([site.urlOf(1), site.urlOf(2), site.urlOf(3)]));
    expect(Object.keys(body.formats).sort()).toEqual(['html', 'links', 'markdown', 'text']);
    console.log(`scrape answered in ${Date.now() - started} ms`);
    // The same pipeline as a crawl: a job of one page that finishes.
    const status = await until(() => api('GET', `/jobs/${body.job_id}/status`), (r) => r.body.status === 'finished', 30_000, 'the scrape job finished');
    expect(status.body).toMatchObject({ depth: 0, counters: { pages_fetched: 1 } });
  }, 60_000);

  it('is never answered from an earlier job', async () => {
    const [a, b] = [await api('POST', '/scrape', { url: site.urlOf(1) }), await api('POST', '/scrape', { url: site.urlOf(1) })];
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.job_id).not.toBe(b.body.job_id);
    expect((a.body.formats as Record<string, string>).markdown).toContain('Page 1');
    expect(Object.keys(a.body.formats as object)).toEqual(['markdown']);
  }, 60_000);

  it('renders a screenshot and gives its stored file', async () => {
    const res = await api('POST', '/scrape', { url: site.urlOf(2), formats: ['screenshot', 'markdown'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const formats = res.body.formats as Record<string, string>;
    expect((res.body.metadata as Record<string, unknown>).render_mode).toBe('browser');
    expect(formats.markdown).toContain('Page 2');
    expect(formats.screenshot).toMatch(/^\/jobs\/[0-9a-f-]+\/pages\/[^/]+\/content\?format=screenshot$/);
    // The file is served by the read model's page, which the projector writes a moment after the answer.
    const png = await until(() => fetch(`${base}${formats.screenshot}`, { headers: { authorization: `Bearer ${key}` } }), (r) => r.status === 200, 20_000, 'the screenshot served');
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
  }, 90_000);

  it('answers a failed page with its error, still 200', async () => {
    const res = await api('POST', '/scrape', { url: `${site.origin}/no-such-page` });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // A 404 is a page that failed (or was fetched with its status): either way the answer says so.
    if (res.body.ok) expect(res.body.status).toBe(404);
    else expect(res.body.error).toMatchObject({ code: expect.any(String) });
  }, 60_000);

  it('answers the metadata with every scrape, from the stored structured data, without the HTML when it is not asked for', async () => {
    const res = await api('POST', '/scrape', { url: site.urlOf(2), formats: ['markdown'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ ok: true, status: 200, metadata: { title: 'Page 2', status_code: 200 } });
    expect(Object.keys(res.body.formats as Record<string, unknown>)).toEqual(['markdown']);
  }, 60_000);

  it('answers 202 when timeout_ms passes first; the job completes and its result is read later', async () => {
    const res = await api('POST', '/scrape', { url: site.urlOf(3), formats: ['markdown'], timeout_ms: 1 });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const jobId = res.body.job_id as string;
    expect(res.body).toMatchObject({ status: 'pending', status_url: `/jobs/${jobId}/status`, result_url: `/scrape/${jobId}` });
    const result = await until(() => api('GET', `/scrape/${jobId}`), (r) => r.status === 200, 30_000, 'the scrape result');
    expect(result.body).toMatchObject({ job_id: jobId, ok: true, status: 200 });
    expect((result.body.formats as Record<string, string>).markdown).toContain('Page 3');
    expect((result.body.metadata as Record<string, unknown>).title).toBe('Page 3');
  }, 60_000);

  it('refuses bad input with a code', async () => {
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ url: site.home, formats: ['markdown', 'rawHtml'] }, 'UNSUPPORTED_FORMAT', 'formats.1'],
      [{ url: 'http://10.0.0.1/' }, 'URL_REFUSED', 'url'],
      [{ url: 'http://169.254.169.254/latest/meta-data/' }, 'URL_REFUSED', 'url'],
      [{ url: `http://user:pw@127.0.0.1:${site.port}/` }, 'URL_REFUSED', 'url'],
      [{ url: site.home, timeout_ms: 10_000_000 }, 'TIMEOUT_TOO_LONG', 'timeout_ms'],
      [{ url: 'ftp://example.com/' }, 'VALIDATION_FAILED'],
    ];
    for (const [body, code, field] of cases) {
      const res = await api('POST', '/scrape', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatchObject({ code, ...(field ? { field } : {}) });
    }
    const map = await api('POST', '/map', { url: 'http://10.0.0.1/' });
    expect(map.status).toBe(400);
    expect(map.body.error).toMatchObject({ code: 'URL_REFUSED' });
  }, 30_000);
});

describe('POST /map', () => {
  it("gives the site's sitemap URLs and links, of its host only, filtered and bounded", async () => {
    const res = await api('POST', '/map', { url: sitemaps.home, limit: 5000 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const links = res.body.links as string[];
    expect(res.body.ok).toBe(true);
    expect(links).toContain(sitemaps.home);
    expect(links).toContain(new URL('/about', sitemaps.home).href);
    // Sitemap URLs of the site (a sitemap page found) and none of another host.
    expect(links.filter((l) => sitemaps.sameHost.includes(l)).length).toBeGreaterThan(5);
    for (const off of sitemaps.offHost) expect(links).not.toContain(off);
    expect(new Set(links).size).toBe(links.length);

    const searched = await api('POST', '/map', { url: sitemaps.home, search: '/P/1', limit: 3 });
    expect(searched.status).toBe(200);
    const found = searched.body.links as string[];
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(3);
    for (const l of found) expect(l.toLowerCase()).toContain('/p/1');

    const linksOnly = await api('POST', '/map', { url: sitemaps.home, sitemap: 'skip' });
    expect(linksOnly.body.links).toEqual([sitemaps.home, new URL('/about', sitemaps.home).href]);
  }, 60_000);
});

describe("Firecrawl's SDK pointed at Trawl", () => {
  it('scrapes a page into the document its types promise, maps a site and crawls it', async () => {
    const firecrawl = new Firecrawl({ apiKey: key, apiUrl: base });
    const doc = await firecrawl.scrape(site.urlOf(4), { formats: ['markdown', 'html', 'links'] });
    expect(doc.markdown).toContain('Page 4');
    expect(doc.html).toContain('<h1>Page 4</h1>');
    expect(doc.links?.length).toBeGreaterThan(0);
    for (const link of doc.links ?? []) expect(link.startsWith(site.origin)).toBe(true);
    expect(doc.metadata).toMatchObject({ title: 'Page 4', sourceURL: site.urlOf(4), statusCode: 200 });
    const scrapeId = doc.metadata?.scrapeId as string;
    // The scrape is a Trawl job like any other.
    expect((await api('GET', `/jobs/${scrapeId}/status`)).status).toBe(200);

    const mapped = await firecrawl.map(sitemaps.home, { search: 'about', limit: 10 });
    expect(mapped.links.map((l) => l.url)).toEqual([new URL('/about', sitemaps.home).href]);

    // A crawl: started, followed by the SDK until completed, every page a document.
    const crawled = await firecrawl.crawl(site.home, { limit: 20, maxDiscoveryDepth: 1, sitemap: 'skip', pollInterval: 1, timeout: 60 });
    expect(crawled.status).toBe('completed');
    expect(crawled.data.map((d) => d.metadata?.sourceURL).sort()).toEqual([site.home, site.urlOf(1), site.urlOf(2), site.urlOf(3)].sort());
    for (const d of crawled.data) expect(d.markdown).toMatch(/Page \d/);

    // A URL crawls may not reach: the SDK throws with Trawl's message.
    await expect(firecrawl.scrape('http://10.0.0.1/')).rejects.toThrow(/not allowed/);
  }, 60_000);
});

describe('a worker SIGKILLed during a scrape', () => {
  it('still gives the answer: the fetch is redelivered to the next worker', async () => {
    site.setLatency(4_000);
    const from = site.accessLog.entries().length;
    const url = `${site.urlOf(5)}?kill=1`;
    // The API client's 30 s would cut a redelivery short: this call waits as long as the scrape may.
    const answer = fetch(`${base}/scrape`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url, formats: ['markdown'], timeout_ms: 90_000 }),
      signal: AbortSignal.timeout(100_000),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    await until(async () => site.accessLog.entries().slice(from).some((e) => e.path.includes('kill=1')), (seen) => seen, 30_000, 'the scrape fetch under way');
    await pipeline.kill(worker);
    site.setLatency(0);
    worker = pipeline.spawn('worker');
    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ ok: true, status: 200 });
    expect((res.body.formats as Record<string, string>).markdown).toContain('Page 5');
  }, 120_000);
});
