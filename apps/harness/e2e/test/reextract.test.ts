/**
 * Re-extraction end to end, through the public API only: the API, frontier, worker and projector-pg
 * as processes on the real stack (Kafka, registry, Postgres, S3) crawl a section of the generated
 * test site with a website whose title selector is broken (`h3`: the pages' titles are `h2`), with
 * `formats: ["markdown"]` so that the bodies are stored. One page's stored body is then deleted
 * from the content store, and `POST /jobs/:id/reextract` runs with the fixed selector:
 *
 * - the site's access log sees not a single request (robots.txt included) while the new job runs;
 * - the new job finishes like any job, every page parsed again and every item's title filled, but
 *   the page without its body, which fails TRAWL_NOT_STORED (counted, listed with the failed pages);
 * - `GET /jobs/:new/changes` (against the source by default, and with `?against=`) lists every item
 *   of the parsed pages as changed in place, the other page's as removed, that page as gone and the
 *   others unchanged (the same stored bodies);
 * - a second re-extraction of the same job under a website's other extraction options — an XPath
 *   item root and fields, a field transform, an item schema (Ajv) and the `metadata` format — gives
 *   the items those rules give (an item failing the schema kept with its errors, counted in
 *   `items_invalid`) and each page's structured data, still without a request;
 * - `trawl replay pg` rebuilds the read models to the live checksums, and the same changes.
 */
import { randomUUID } from 'node:crypto';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';
import type { Pipeline } from '../src/pipeline.ts';
import { trawlReplay } from './chaos/support.ts';

const PAGES = 7;
const DEPTH = 2;
const ITEMS_PER_PAGE = 2;
/** The content page whose stored body is deleted before the re-extraction. */
const UNSTORED = 3;

let site: TestSite;
let pipeline: Pipeline;
let store: ContentStore | undefined;
const bucket = `trawl-e2e-reextract-${randomUUID().slice(0, 8)}`;

let api: Api;
let until: Until;

beforeAll(async () => {
  site = await createTestSite({ pages: PAGES, linksPerPage: 2, itemsPerPage: ITEMS_PER_PAGE, traps: false });
  store = new ContentStore({ ...contentStoreConfig(), bucket });
  // The parse budget is not under test: several pipelines may share this machine's cores.
  ({ pipeline, api, until } = await startApiPipeline({ env: { TRAWL_S3_BUCKET: bucket, TRAWL_PARSE_TIMEOUT_MS: '30000' }, users: ['reextractor'], pollMs: 300 }));
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  if (store) {
    await store.delete(await store.list()).catch(() => undefined);
    store.close();
  }
});

type Item = { url: string; fields: Record<string, string> };
const itemsOf = async (jobId: string): Promise<Item[]> => (await api('GET', `/jobs/${jobId}/items?limit=500`)).body.items as Item[];

/** Until the job has finished and its items are all projected. */
async function finished(jobId: string, items: number): Promise<Record<string, unknown>> {
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 180_000, `job ${jobId} ended`);
  expect(status.body.status, JSON.stringify(status.body)).toBe('finished');
  await until(() => itemsOf(jobId), (list) => list.length >= items, 60_000, `the ${items} items of ${jobId}`);
  return status.body;
}

it('re-extracts a crawl under a fixed selector without a single request to the site, and lists every item as changed', async () => {
  const expected = site.expected(DEPTH);
  expect(expected.items).toBe(PAGES * ITEMS_PER_PAGE);
  const spider = `broken-${randomUUID().slice(0, 6)}`;
  const link = { name: 'link', selector: 'a.more', attribute: 'href' };
  const website = { name: 'Test site', base_url: site.home, item_root: 'article.item', item_fields: [{ name: 'title', selector: 'h3' }, link], max_depth: DEPTH, max_pages: 100 };
  expect((await api('PUT', `/websites/${spider}`, website)).status).toBe(201);

  // The crawl, with the broken title selector: items without their title.
  const crawl = await api('POST', '/crawl', { spider, start_urls: [site.home], depth: DEPTH, formats: ['markdown'] });
  expect(crawl.status, JSON.stringify(crawl.body)).toBe(200);
  const source = crawl.body.job_id as string;
  const first = await finished(source, expected.items);
  expect(first.counters).toMatchObject({ pages_fetched: PAGES, pages_failed: 0, items_extracted: expected.items });
  const broken = await itemsOf(source);
  expect(broken.every((i) => !i.fields.title)).toBe(true);
  const served = site.accessLog.entries().length;
  expect(served).toBeGreaterThanOrEqual(PAGES);

  // Bad input first: nothing to re-extract from another job id, a selector that is no selector.
  expect((await api('POST', `/jobs/${randomUUID()}/reextract`, { spec: { item_root: 'article.item' } })).status).toBe(404);
  expect((await api('POST', `/jobs/${source}/reextract`, { spec: { item_fields: [{ name: 'title', selector: 'h2[' }] } })).body).toMatchObject({ error: { code: 'VALIDATION_FAILED', field: 'spec.item_fields.0.selector' } });

  // One page's body goes from the content store (as content retention would delete it).
  const sourcePages = (await api('GET', `/jobs/${source}/pages?limit=100`)).body.pages as { url: string; content_hash: string }[];
  const unstored = sourcePages.find((p) => p.url === site.urlOf(UNSTORED))!;
  await store!.delete([unstored.content_hash]);

  // The re-extraction with the fixed selector.
  site.accessLog.clear();
  const started = Date.now();
  const again = await api('POST', `/jobs/${source}/reextract`, { spec: { item_fields: [{ name: 'title', selector: 'h2' }, link] } });
  expect(again.status, JSON.stringify(again.body)).toBe(200);
  expect(again.body).toMatchObject({ reextract_of: source, cached: false, pages: { fetched: PAGES, stored: PAGES, not_stored: 0 } });
  const fixed = again.body.job_id as string;
  const parsedItems = expected.items - ITEMS_PER_PAGE;
  const second = await finished(fixed, parsedItems);
  console.log(`re-extraction of ${PAGES} pages finished in ${Date.now() - started} ms`);
  expect(second).toMatchObject({ reextract_of: source, start_urls: [site.home] });
  expect(second.counters).toMatchObject({ pages_fetched: PAGES - 1, pages_failed: 1, items_extracted: parsedItems });
  expect(site.accessLog.entries()).toEqual([]);
  const failed = (await api('GET', `/jobs/${fixed}/pages?ok=false`)).body.pages as { url: string; error_code: string }[];
  expect(failed.map((p) => [p.url, p.error_code])).toEqual([[site.urlOf(UNSTORED), 'TRAWL_NOT_STORED']]);

  const items = await itemsOf(fixed);
  expect(items).toHaveLength(parsedItems);
  for (const item of items) expect(item.fields.title, JSON.stringify(item)).toMatch(/^Item \d+ of page \d+$/);
  expect(items.map((i) => i.fields.link).sort()).toEqual(broken.filter((i) => i.url !== site.urlOf(UNSTORED)).map((i) => i.fields.link).sort());

  // The changes between the two: every item of a parsed page changed in place (same page, same
  // position), the unstored page's items removed with it; no page changed.
  type Changes = { previous_job_id: string; settled: boolean; pages: { counts: Record<string, number> }; items: { counts: Record<string, number>; changed: { url: string; fields: Record<string, string>; previous_fields: Record<string, string> }[] } };
  for (const path of [`/jobs/${fixed}/changes`, again.body.changes_url as string]) {
    const changes = (await until(() => api('GET', path), (r) => r.status === 200 && (r.body as unknown as Changes).settled, 30_000, 'the changes settled')).body as unknown as Changes;
    expect(changes.previous_job_id).toBe(source);
    expect(changes.items.counts).toEqual({ new: 0, changed: parsedItems, removed: ITEMS_PER_PAGE, unchanged: 0 });
    expect(changes.pages.counts).toMatchObject({ new: 0, gone: 1, changed: 0, unchanged: PAGES - 1 });
    for (const c of changes.items.changed) {
      expect(c.previous_fields.title ?? '').toBe('');
      expect(c.fields.title).toMatch(/^Item \d+ of page \d+$/);
    }
  }
  // Still not a single request.
  expect(site.accessLog.entries()).toEqual([]);

  // A second re-extraction under XPath rules, a transform, an item schema and the metadata format:
  // each page's second item (n = 2) fails the schema's maximum and is kept with its errors.
  const xpathSpec = {
    item_root_xpath: '//article[@class="item"]',
    item_fields: [
      { name: 'title', xpath: 'normalize-space(.//h2)' },
      { name: 'n', xpath: './/h2', transforms: [{ type: 'regex', pattern: '^Item (\\d+)' }, { type: 'number' }] },
    ],
    item_schema: { type: 'object', required: ['title', 'n'], properties: { n: { type: 'number', maximum: 1 } } },
    formats: ['metadata'],
  };
  const typed = await api('POST', `/jobs/${source}/reextract`, { spec: xpathSpec });
  expect(typed.status, JSON.stringify(typed.body)).toBe(200);
  const typedJob = typed.body.job_id as string;
  const third = await finished(typedJob, parsedItems);
  expect(third.counters).toMatchObject({ pages_fetched: PAGES - 1, pages_failed: 1, items_extracted: parsedItems, items_invalid: PAGES - 1 });
  type TypedItem = Item & { errors: string[] };
  const typedItems = (await itemsOf(typedJob)) as TypedItem[];
  expect(typedItems).toHaveLength(parsedItems);
  for (const item of typedItems) {
    const [, n, page] = /^Item (\d+) of page (\d+)$/.exec(item.fields.title ?? '') ?? [];
    expect(n, JSON.stringify(item)).toBeDefined();
    expect(String(item.fields.n)).toBe(n);
    expect(item.url).toBe(site.urlOf(Number(page)));
    if (n === '1') expect(item.errors, JSON.stringify(item)).toEqual([]);
    else expect(item.errors.join(' '), JSON.stringify(item)).toMatch(/maximum|<= 1/);
  }
  const typedPages = (await api('GET', `/jobs/${typedJob}/pages?limit=100`)).body.pages as { url: string; fetch_id: string; ok: boolean }[];
  for (const p of typedPages.filter((x) => x.ok)) {
    const metadata = await api('GET', `/jobs/${typedJob}/pages/${p.fetch_id}/content?format=metadata`);
    expect(metadata.status, p.url).toBe(200);
    expect(metadata.body.title).toMatch(/^Page \d+$/);
  }
  expect(site.accessLog.entries()).toEqual([]);

  // projector-pg's read models rebuilt from the log equal the live ones, and give the same changes.
  const live = (await api('GET', `/jobs/${fixed}/changes`)).body;
  expect((await trawlReplay(pipeline, 'pg')).verified).toBe('live');
  expect((await api('GET', `/jobs/${fixed}/changes`)).body).toEqual(live);
}, 420_000);
