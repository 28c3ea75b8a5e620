/**
 * `POST /jobs/:id/reextract` on read-model rows written as projector-pg writes them, with the real
 * producer: what is refused (nothing produced), and what a re-extraction dispatches — a job whose
 * spec names its source, carries the new rules and none of the crawl's request options. The whole
 * path (frontier, worker, content store, zero requests to the site) runs in apps/harness/e2e's
 * reextract test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlSpec } from '@trawl/store';
import { seedJob, seedPages } from './read-model.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const post = (url: string, auth: object, payload: unknown) => api.app.inject({ method: 'POST', url, headers: auth as Record<string, string>, payload: payload as Record<string, unknown> });
const FIXED = { item_root: 'article.item', item_fields: [{ name: 'title', selector: 'h2' }] };

/** A finished job of `user` with 4 pages (one failed), the first `stored` of the fetched ones with a body. */
async function finishedJob(user: string, stored: number, status: 'running' | 'finished' = 'finished'): Promise<string> {
  const id = await seedJob(api.db.pool, { user_id: user, status, pages_fetched: 3 });
  const spec = { ...crawlSpec(null, { depth: 1 }), item_root: 'article.item', item_fields: [{ name: 'title', selector: 'h3', attribute: null }], headers: { 'x-token': 'tsec1.sealed' }, store_in_cache: true };
  await api.db.pool.query(`UPDATE jobs SET spec = $2, completed_urls_seen = 4 WHERE job_id = $1`, [id, JSON.stringify(spec)]);
  await seedPages(api.db.pool, id, 4);
  await api.db.pool.query(
    `UPDATE job_pages SET content_hash = repeat('a', 64) WHERE job_id = $1 AND fetch_id IN (SELECT fetch_id FROM job_pages WHERE job_id = $1 AND ok ORDER BY fetch_id LIMIT $2)`,
    [id, stored],
  );
  return id;
}

describe('POST /jobs/:id/reextract', () => {
  it("refuses another user's job (404), one still running or not all recorded (409), one without a stored body (409), a costly selector (400), producing nothing", async () => {
    const { user, auth } = await api.user();
    const other = await api.user();
    const before = api.emitted.length;
    const mine = await finishedJob(user, 2);
    const code = async (url: string, body: unknown = { spec: FIXED }) => {
      const res = await post(url, auth, body);
      return [res.statusCode, res.json().error?.code];
    };
    expect(await code(`/jobs/${await finishedJob(other.user, 2)}/reextract`)).toEqual([404, 'JOB_NOT_FOUND']);
    expect(await code(`/jobs/${await finishedJob(user, 2, 'running')}/reextract`)).toEqual([409, 'JOB_NOT_FINISHED']);
    const partial = await finishedJob(user, 2);
    await api.db.pool.query(`UPDATE jobs SET completed_urls_seen = 5 WHERE job_id = $1`, [partial]);
    expect(await code(`/jobs/${partial}/reextract`)).toEqual([409, 'JOB_NOT_FINISHED']);
    expect(await code(`/jobs/${await finishedJob(user, 0)}/reextract`)).toEqual([409, 'NOTHING_TO_REEXTRACT']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: { item_root: 'a ~ b' } })).toEqual([400, 'UNSUPPORTED_SELECTOR']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: {} }), 'empty').toEqual([400, 'VALIDATION_FAILED']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: { formats: ['screenshot'] } })).toEqual([400, 'VALIDATION_FAILED']);
    // The website checks and bounds, run on the spec the job would carry: XPath, transforms, item schema.
    expect(await code(`/jobs/${mine}/reextract`, { spec: { item_root_xpath: '//li/following::a' } })).toEqual([400, 'UNSUPPORTED_SELECTOR']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: { item_root_xpath: '//li[' } })).toEqual([400, 'VALIDATION_FAILED']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: { item_root: 'li', item_root_xpath: '//li' } }), 'two roots').toEqual([400, 'VALIDATION_FAILED']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: { item_fields: [{ name: 't', xpath: './/h2', transforms: [{ type: 'regex' }] }] } })).toEqual([400, 'INVALID_TRANSFORM']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: { item_schema: { type: 'object', properties: { t: { type: 'text' } } } } })).toEqual([400, 'INVALID_ITEM_SCHEMA']);
    expect(await code(`/jobs/${mine}/reextract`, { spec: { item_schema: { type: 'object', description: 'x'.repeat(17 * 1024) } } }), 'over 16 KiB').toEqual([400, 'INVALID_ITEM_SCHEMA']);
    expect(api.emitted.length).toBe(before);
  });

  it('dispatches a job whose spec names its source, with the new rules and no request option; asked again, answers the same job', async () => {
    const { user, auth } = await api.user();
    const source = await finishedJob(user, 2);
    const res = await post(`/jobs/${source}/reextract`, auth, { spec: FIXED });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ scheduled: false, cached: false, reextract_of: source, max_pages: 3, pages: { fetched: 3, stored: 2, not_stored: 1 }, changes_url: `/jobs/${body.job_id}/changes?against=${source}` });
    const dispatched = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === body.job_id)!.body as { user_id: string; spec: Record<string, unknown> };
    expect(dispatched.user_id).toBe(user);
    expect(dispatched.spec).toMatchObject({ reextract_of: source, item_root: 'article.item', item_fields: [{ name: 'title', selector: 'h2', attribute: null }], max_pages: 3, headers: {}, sitemap: 'skip', store_in_cache: false, requires_browser: false });
    // Visible like any job, with its source, before projector-pg has it.
    expect((await api.app.inject({ method: 'GET', url: `/jobs/${body.job_id}/status`, headers: auth })).json()).toMatchObject({ status: 'pending', reextract_of: source, max_pages: 3 });
    const again = (await post(`/jobs/${source}/reextract`, auth, { spec: FIXED })).json();
    expect({ job_id: again.job_id, cached: again.cached }).toEqual({ job_id: body.job_id, cached: true });
    // Other rules are another re-extraction.
    expect((await post(`/jobs/${source}/reextract`, auth, { spec: { ...FIXED, formats: ['markdown'] } })).json().job_id).not.toBe(body.job_id);
  });

  it('carries an XPath item root and fields, an item schema and the metadata format to the new job, as a website would', async () => {
    const { user, auth } = await api.user();
    const source = await finishedJob(user, 2);
    const schema = { type: 'object', required: ['title', 'price'], properties: { price: { type: 'number' } } };
    const spec = {
      item_root_xpath: '//article[@class="item"]',
      item_fields: [{ name: 'title', xpath: 'normalize-space(.//h2)' }, { name: 'price', selector: '.price', transforms: [{ type: 'number' }] }],
      item_schema: schema,
      formats: ['metadata'],
    };
    const res = await post(`/jobs/${source}/reextract`, auth, { spec });
    expect(res.statusCode, res.body).toBe(200);
    const dispatched = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === res.json().job_id)!.body as { spec: Record<string, unknown> };
    expect(dispatched.spec).toMatchObject({
      reextract_of: source,
      // The source's CSS root gives way to the XPath one.
      item_root: null,
      item_root_xpath: '//article[@class="item"]',
      item_fields: [
        { name: 'title', selector: '', xpath: 'normalize-space(.//h2)', attribute: null, transforms: [] },
        { name: 'price', selector: '.price', xpath: null, attribute: null, transforms: [{ type: 'number', pattern: null }] },
      ],
      formats: ['metadata'],
    });
    expect(JSON.parse(dispatched.spec.item_schema as string)).toEqual(schema);
  });
});

describe('GET /jobs/:id/changes?against=', () => {
  it("compares with a job of the caller's only", async () => {
    const { user, auth } = await api.user();
    const other = await api.user();
    const mine = await finishedJob(user, 1);
    const theirs = await finishedJob(other.user, 1);
    const get = (against: string) => api.app.inject({ method: 'GET', url: `/jobs/${mine}/changes?against=${against}`, headers: auth });
    expect([(await get(theirs)).statusCode, (await get(theirs)).json().error.code]).toEqual([404, 'JOB_NOT_FOUND']);
    const same = (await get(mine)).json();
    expect({ previous_job_id: same.previous_job_id, schedule_id: same.schedule_id, settled: same.settled, pages: same.pages.counts }).toEqual({
      previous_job_id: mine, schedule_id: null, settled: true, pages: { new: 0, changed: 0, gone: 0, unchanged: 1, unknown: 2 },
    });
  });
});
