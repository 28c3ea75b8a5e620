/**
 * `GET /jobs/:id/changes` over the read models as projector-pg writes them: two runs of a schedule,
 * their pages and items, grouped by kind with whole counts and capped lists; another user's job is
 * a 404 and a job no schedule started a 409. (The whole pipeline, two real runs and the webhook:
 * apps/harness/e2e/test/change-tracking.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import { fetchId, itemKey } from '@trawl/crawl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedJob } from './read-model.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api?.close());

const SITE = 'http://watch.test';

async function run(user: string, schedule: string | null, startedAgoS: number, pages: Record<string, string | null>, items: { path: string; index: number; t: string }[]): Promise<string> {
  const job = await seedJob(api.db.pool, { user_id: user, status: 'finished', schedule_id: schedule, requested_at: new Date(Date.now() - startedAgoS * 1000) });
  await api.db.pool.query('UPDATE jobs SET completed_urls_seen = $2 WHERE job_id = $1', [job, Object.keys(pages).length]);
  for (const [path, hash] of Object.entries(pages)) {
    const url = `${SITE}${path}`;
    await api.db.pool.query(
      `INSERT INTO job_pages (job_id, fetch_id, url, status, depth, render_mode, ok, fetched_at, event_id, content_hash) VALUES ($1, $2, $3, 200, 0, 'http', true, now(), $4, $5)`,
      [job, fetchId(job, url), url, randomUUID(), hash],
    );
  }
  for (const { path, index, t } of items) {
    const url = `${SITE}${path}`;
    await api.db.pool.query(
      `INSERT INTO job_items (job_id, item_key, fetch_id, url, fields, extracted_at, event_id) VALUES ($1, $2, $3, $4, $5, now(), $6)`,
      [job, itemKey(url, index, { t }), fetchId(job, url), url, JSON.stringify({ t }), randomUUID()],
    );
  }
  return job;
}

describe('GET /jobs/:id/changes', () => {
  it('groups pages and items of a run by kind against the previous finished run, with whole counts', async () => {
    const { user, auth } = await api.user();
    const schedule = randomUUID();
    const previous = await run(user, schedule, 600, { '/': 'h1', '/a': 'a1', '/gone': 'g1', '/bare': null }, [{ path: '/', index: 0, t: 'A' }, { path: '/', index: 1, t: 'B' }]);
    const current = await run(user, schedule, 60, { '/': 'h1', '/a': 'a2', '/new': 'n1', '/bare': null }, [{ path: '/', index: 0, t: 'A' }, { path: '/', index: 1, t: 'B2' }, { path: '/new', index: 0, t: 'N' }]);
    const res = await api.app.inject({ method: 'GET', url: `/jobs/${current}/changes`, headers: auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ job_id: current, schedule_id: schedule, status: 'finished', previous_job_id: previous, settled: true, waiting_for: [], truncated: false });
    expect(body.pages.counts).toEqual({ new: 1, changed: 1, gone: 1, unchanged: 1, unknown: 1 });
    expect(body.pages.changed).toEqual([{ url: `${SITE}/a`, fetch_id: fetchId(current, `${SITE}/a`), content_hash: 'a2', previous_fetch_id: fetchId(previous, `${SITE}/a`), previous_content_hash: 'a1' }]);
    expect(body.pages.gone).toEqual([{ url: `${SITE}/gone`, fetch_id: null, content_hash: null, previous_fetch_id: fetchId(previous, `${SITE}/gone`), previous_content_hash: 'g1' }]);
    expect(body.pages.new.map((p: { url: string }) => p.url)).toEqual([`${SITE}/new`]);
    expect(body.pages.unknown.map((p: { url: string }) => p.url)).toEqual([`${SITE}/bare`]);
    expect(body.items.counts).toEqual({ new: 1, changed: 1, removed: 0, unchanged: 1 });
    expect(body.items.changed).toEqual([{ url: `${SITE}/`, index: 1, item_key: itemKey(`${SITE}/`, 1, { t: 'B2' }), fields: { t: 'B2' }, previous_item_key: itemKey(`${SITE}/`, 1, { t: 'B' }), previous_fields: { t: 'B' } }]);
    expect(body.items.new).toMatchObject([{ url: `${SITE}/new`, index: 0, fields: { t: 'N' }, previous_item_key: null, previous_fields: null }]);

    const capped = (await api.app.inject({ method: 'GET', url: `/jobs/${current}/changes?limit=1`, headers: auth })).json();
    expect(capped.truncated).toBe(false);
    const first = (await api.app.inject({ method: 'GET', url: `/jobs/${previous}/changes?limit=1`, headers: auth })).json();
    expect(first).toMatchObject({ previous_job_id: null, truncated: true, pages: { counts: { new: 4 } }, items: { counts: { new: 2 } } });
    expect(first.pages.new).toHaveLength(1);
  });

  it("answers 404 for another user's job and 409 for a job no schedule started", async () => {
    const { user, auth } = await api.user();
    const other = await api.user();
    const scheduled = await run(user, randomUUID(), 60, { '/': 'h' }, []);
    const adHoc = await run(user, null, 60, { '/': 'h' }, []);
    expect((await api.app.inject({ method: 'GET', url: `/jobs/${scheduled}/changes`, headers: other.auth })).json().error.code).toBe('JOB_NOT_FOUND');
    const res = await api.app.inject({ method: 'GET', url: `/jobs/${adHoc}/changes`, headers: auth });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('JOB_NOT_SCHEDULED');
  });
});
