/**
 * Typed items end to end through the public API (issue 35, item 4): the API, frontier, worker and
 * projector-pg as processes on the real stack crawl the demo job board's first listing page with a
 * website read entirely by XPath (root and fields), whose fields are transformed (`number`, `date`,
 * `regex`) and whose items are validated against a JSON Schema that some of the page's listings
 * fail (a salary under 80k):
 *
 * - a website whose XPath is costly, whose schema does not compile or whose transform cannot run is
 *   refused 400 with its code;
 * - every listing is an item — the ones that fail the schema kept with their errors, never dropped —
 *   counted in `counters.items_invalid`, listed alone with `?valid=false`, the others with `?valid=true`.
 */
import { randomBytes } from 'node:crypto';
import { createJobBoard, listing, serve, type RunningServer } from '@trawl/demo-site';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

/** The listings on the board's first page (ids 1–10) and the least salary (in k€) the schema accepts. */
const PER_PAGE = 10;
const MIN_SALARY = 80;

let board: RunningServer;
let pipeline: Pipeline;
const spider = `typed-${randomBytes(3).toString('hex')}`;

let api: Api;
let until: Until;

const website = {
  name: 'Typed jobs',
  base_url: '',
  item_root_xpath: "//article[@class='job']",
  item_fields: [
    { name: 'title', xpath: 'normalize-space(h2)' },
    { name: 'link', xpath: 'h2/a/@href' },
    { name: 'salary', xpath: "p[@class='salary']", transforms: [{ type: 'number' }] },
    { name: 'posted', xpath: 'time/@datetime', transforms: [{ type: 'date' }] },
    { name: 'job_id', xpath: 'h2/a/@href', transforms: [{ type: 'regex', pattern: '/jobs/(\\d+)$' }] },
  ],
  item_schema: {
    type: 'object',
    required: ['title', 'link', 'salary', 'posted'],
    properties: { salary: { type: 'number', minimum: MIN_SALARY }, posted: { type: 'string', format: 'date-time' }, link: { type: 'string', pattern: '^http://' } },
  },
  max_depth: 0,
};

beforeAll(async () => {
  board = await serve(createJobBoard({ listings: 30 }));
  website.base_url = `${board.origin}/jobs`;
  ({ pipeline, api, until } = await startApiPipeline({ env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${board.port}` }, users: ['typed-items'] }));
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await board?.close();
});

type Item = { item_key: string; fields: Record<string, string>; errors: string[] };

it('crawls with an XPath website and an item schema: the failing items kept with their errors, counted and filterable', async () => {
  // Refused when saved, each with its code.
  const refused = async (change: Record<string, unknown>) => (await api('PUT', `/websites/${spider}`, { ...website, ...change })).body;
  expect(await refused({ item_root_xpath: '//article/following::article' })).toMatchObject({ error: { code: 'UNSUPPORTED_SELECTOR', field: 'item_root_xpath' } });
  expect(await refused({ item_root_xpath: '//article[' })).toMatchObject({ error: { code: 'VALIDATION_FAILED', field: 'item_root_xpath' } });
  expect(await refused({ item_schema: { type: 'object', propertees: {} } })).toMatchObject({ error: { code: 'INVALID_ITEM_SCHEMA', field: 'item_schema' } });
  expect(await refused({ item_fields: [{ name: 'id', xpath: '@data-id', transforms: [{ type: 'regex' }] }] })).toMatchObject({ error: { code: 'INVALID_TRANSFORM', field: 'item_fields.0.transforms' } });

  const saved = await api('PUT', `/websites/${spider}`, website);
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  expect(saved.body).toMatchObject({ item_root_xpath: website.item_root_xpath, item_schema: website.item_schema });

  const submitted = await api('POST', '/crawl', { spider, start_urls: [website.base_url], depth: 0, ignore_cache: true });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const listings = Array.from({ length: PER_PAGE }, (_, i) => listing(i + 1));
  const underpaid = listings.filter((l) => Number.parseInt(l.salary.slice(1), 10) < MIN_SALARY);
  expect(underpaid.length).toBeGreaterThan(0);
  expect(underpaid.length).toBeLessThan(PER_PAGE);

  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => r.body.status === 'finished' && (r.body.counters as { items_extracted: number }).items_extracted === PER_PAGE, 90_000, `job ${jobId} finished with its items`);
  expect(status.body.counters).toMatchObject({ pages_fetched: 1, pages_failed: 0, items_extracted: PER_PAGE, items_invalid: underpaid.length });

  const items = (await api('GET', `/jobs/${jobId}/items?limit=100`)).body.items as Item[];
  expect(items).toHaveLength(PER_PAGE);
  const byId = new Map(items.map((i) => [i.fields.job_id, i]));
  for (const l of listings) {
    const item = byId.get(String(l.id))!;
    expect(item.fields).toEqual({ title: l.title, link: `${board.origin}/jobs/${l.id}`, salary: String(Number.parseInt(l.salary.slice(1), 10)), posted: `${l.posted}T00:00:00.000Z`, job_id: String(l.id) });
    expect(item.errors).toEqual(underpaid.includes(l) ? [`/salary must be >= ${MIN_SALARY}`] : []);
  }

  const invalid = (await api('GET', `/jobs/${jobId}/items?limit=100&valid=false`)).body.items as Item[];
  expect(invalid.map((i) => i.fields.job_id).sort()).toEqual(underpaid.map((l) => String(l.id)).sort());
  const valid = (await api('GET', `/jobs/${jobId}/items?limit=100&valid=true`)).body.items as Item[];
  expect(valid).toHaveLength(PER_PAGE - underpaid.length);
  expect(valid.every((i) => i.errors.length === 0)).toBe(true);
}, 180_000);
