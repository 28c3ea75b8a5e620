/**
 * Browser actions, scrolled and load-more lists, screenshots and PDFs end to end, through the
 * public API (issue 33, browser actions): the hard site's list that loads by script on scroll and
 * its "load more" list, each saved as a website with its pagination type, are crawled to every
 * item — in Chromium, although neither website says `requires_browser` — and the screenshot (a
 * screenshot action's, of the whole page) and the PDF asked with `formats` are served back by
 * the content endpoint as image/png and application/pdf. A search form is filled by actions in
 * order, the query typed from a user's secret, which no service logs.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import { createHardSite, expectedDynamicLists, type HardSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';
import type { Pipeline } from '../src/pipeline.ts';

let site: HardSite;
let pipeline: Pipeline;
let base: string;
let key: string;
let store: ContentStore | undefined;
const bucket = `trawl-e2e-${randomUUID().slice(0, 8)}`;

let api: Api;
let until: Until;
const { itemSelector, nameSelector, scroll, more, search } = expectedDynamicLists;

beforeAll(async () => {
  site = await createHardSite({ host: '127.0.0.1' });
  const port = new URL(site.origin).port;
  store = new ContentStore({ ...contentStoreConfig(), bucket });
  // A short settle time: the hard site answers each page of its lists within ~50 ms.
  ({ pipeline, base, key, api, until } = await startApiPipeline({ env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${port}`, TRAWL_S3_BUCKET: bucket, TRAWL_BROWSER_SETTLE_MS: '500' }, users: [`lister-${randomBytes(3).toString('hex')}`] }));
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  if (store) {
    await store.delete(await store.list()).catch(() => undefined);
    store.close();
  }
});

/** Saves a website for one list, crawls its page, and answers the finished job's id. */
async function crawlList(spider: string, website: Record<string, unknown>, crawl: Record<string, unknown>): Promise<string> {
  const saved = await api('PUT', `/websites/${spider}`, { name: spider, base_url: `${site.origin}/`, item_root: itemSelector, item_fields: [{ name: 'name', selector: nameSelector }], max_depth: 0, ...website });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  const submitted = await api('POST', '/crawl', { spider, depth: 0, sitemap: 'skip', ignore_cache: true, ...crawl });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 90_000, `job ${jobId} over`);
  expect(status.body, JSON.stringify(status.body)).toMatchObject({ status: 'finished', counters: { pages_fetched: 1 } });
  return jobId;
}

/** Every item's name, as the API lists them (the read model may trail the job's end by a moment). */
async function names(jobId: string, total: number): Promise<string[]> {
  const answer = await until(() => api('GET', `/jobs/${jobId}/items?limit=100`), (r) => ((r.body.items as unknown[]) ?? []).length >= total, 30_000, `the items of ${jobId}`);
  return (answer.body.items as { fields: { name: string } }[]).map((i) => i.fields.name);
}

const byNumber = (a: string, b: string) => Number(a.split(' ').at(-1)) - Number(b.split(' ').at(-1));

describe('dynamic lists through the public API', () => {
  it('scrolls a list that loads by script to its last item, and serves its screenshot and PDF', async () => {
    const jobId = await crawlList(
      `scroll-${randomBytes(3).toString('hex')}`,
      { pagination_type: 'infinite_scroll' },
      { start_urls: [`${site.origin}${scroll.path}`], formats: ['html', 'screenshot', 'pdf'], actions: [{ type: 'wait_for', selector: itemSelector }, { type: 'screenshot', full_page: true }] },
    );
    expect((await names(jobId, scroll.names.length)).sort(byNumber)).toEqual(scroll.names);
    const pages = await api('GET', `/jobs/${jobId}/pages`);
    const page = (pages.body.pages as { fetch_id: string; render_mode: string; formats: { format: string }[] }[])[0]!;
    expect(page.render_mode).toBe('browser');
    expect(page.formats.map((f) => f.format)).toEqual(['html', 'screenshot', 'pdf']);

    const content = (format: string) => fetch(`${base}/jobs/${jobId}/pages/${encodeURIComponent(page.fetch_id)}/content?format=${format}`, { headers: { authorization: `Bearer ${key}` } });
    const png = await content('screenshot');
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(png.headers.get('content-disposition')).toMatch(/^attachment; filename=".*\.png"$/);
    const image = Buffer.from(await png.arrayBuffer());
    expect(image.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // The screenshot action's, of the whole first page of the list (taller than the 600 px viewport).
    expect(image.readUInt32BE(20)).toBeGreaterThan(900);
    const pdf = await content('pdf');
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  }, 150_000);

  it('clicks "load more" until every item is there', async () => {
    const jobId = await crawlList(`more-${randomBytes(3).toString('hex')}`, { pagination_type: 'load_more', load_more_selector: more.loadMoreSelector }, { start_urls: [`${site.origin}${more.path}`] });
    expect((await names(jobId, more.names.length)).sort(byNumber)).toEqual(more.names);
  }, 150_000);

  it('fills a search form by actions in order, typing a secret', async () => {
    const query = `q${randomBytes(6).toString('hex')}`;
    expect((await api('POST', '/secrets', { name: 'search-query', value: query })).status).toBeLessThan(300);
    const jobId = await crawlList(
      `search-${randomBytes(3).toString('hex')}`,
      { item_root: search.resultSelector, item_fields: [{ name: 'name', selector: '' }] },
      {
        start_urls: [`${site.origin}${search.path}`],
        actions: [
          { type: 'wait_for', selector: '#q' },
          { type: 'click', selector: '#exact' },
          { type: 'type', selector: '#q', text: { secret: 'search-query' } },
          { type: 'press', key: 'Enter' },
          { type: 'wait_for', selector: search.resultSelector },
        ],
      },
    );
    expect((await names(jobId, 3)).sort()).toEqual([1, 2, 3].map((i) => `${query} result ${i}`));
    for (const child of pipeline.children) expect(readFileSync(child.logFile, 'utf8'), child.app).not.toContain(query);
  }, 150_000);
});
