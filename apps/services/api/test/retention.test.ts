/**
 * Content retention against the real S3 of the environment (a fresh bucket) and Postgres: what
 * `POST /crawl` and a schedule may ask, and the sweep that enforces it — a job past its retention
 * loses its content, objects another live job names stay, a running job or one within its
 * retention keeps everything, and once the last job naming a shared object has expired, it goes.
 */
import { randomUUID } from 'node:crypto';
import { storePageContent, type ContentStore, type PageContent } from '@trawl/content';
import { testContentStore } from '@trawl/content/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetentionSweep } from '../src/content/retention-sweep.ts';
import { seedJob } from './read-model.ts';
import { eventually, startTestApi, type TestApi } from './support.ts';

const RETENTION = { defaultSeconds: 3_600, maxSeconds: 86_400, sweepMs: 0 };
let api: TestApi;
let store: ContentStore;
beforeAll(async () => {
  store = await testContentStore();
  api = await startTestApi({ content: store, config: { contentRetention: RETENTION } });
});
afterAll(async () => {
  await api?.close();
  if (store) {
    await store.delete(await store.list());
    store.close();
  }
});

let n = 0;
const page = (title: string) =>
  storePageContent(store, { html: `<html><head><title>${title}</title></head><body><article><h1>${title}</h1><p>${`${title} is kept for as long as its job says. `.repeat(6)}</p></article></body></html>`, finalUrl: `http://keep.test/${title}` }, ['markdown']);

async function seedContentPage(jobId: string, content: PageContent): Promise<string> {
  const fetchId = `f${++n}`;
  await api.db.pool.query(
    `INSERT INTO job_pages (job_id, fetch_id, url, final_url, status, content_type, bytes, fetch_ms, depth, render_mode, links_count,
       item_count, ok, attempts, fetched_at, event_id, content_hash, formats)
     VALUES ($1, $2, $3, $3, 200, 'text/html', 100, 5, 1, 'http', 0, 0, true, 1, now(), $4, $5, $6)`,
    [jobId, fetchId, `http://keep.test/${fetchId}`, randomUUID(), content.contentHash, JSON.stringify(content.formats)],
  );
  return fetchId;
}

/** A job the API accepted, with the request it stored, ended `endedAgoS` seconds ago (null: running). */
async function apiJob(user: string, request: Record<string, unknown>, endedAgoS: number | null): Promise<string> {
  const id = await seedJob(api.db.pool, { user_id: user, status: endedAgoS === null ? 'running' : 'finished', requested_at: new Date(Date.now() - ((endedAgoS ?? 0) + 5) * 1000) });
  await api.db.pool.query('INSERT INTO api_jobs (job_id, user_id, dedupe_key, request) VALUES ($1, $2, $3, $4)', [id, user, randomUUID(), JSON.stringify(request)]);
  return id;
}

const objects = (c: PageContent) => [c.contentHash, ...c.formats.map((f) => f.hash)];
async function stored(c: PageContent): Promise<boolean> {
  const has = await Promise.all(objects(c).map((h) => store.has(h)));
  if (has.every(Boolean)) return true;
  if (has.some(Boolean)) throw new Error('some of a page\'s objects deleted, not all');
  return false;
}

describe('content retention', () => {
  it('is asked for per crawl and per schedule, within the maximum; a schedule keeps its formats for every run', async () => {
    const { auth } = await api.user();
    const tooLong = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['https://keep.example/'], depth: 0, content_retention: 86_401 } });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error).toMatchObject({ code: 'RETENTION_TOO_LONG', field: 'content_retention', limit: { name: 'content_retention_max_seconds', value: 86_400, used: 86_401 } });
    expect((await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['https://keep.example/'], depth: 0, content_retention: 0 } })).json().error.code).toBe('VALIDATION_FAILED');

    const now = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['https://keep.example/'], depth: 0, formats: ['markdown'], content_retention: 600 } });
    expect(now.statusCode).toBe(200);
    const { rows } = await api.db.pool.query('SELECT request FROM api_jobs WHERE job_id = $1', [now.json().job_id]);
    expect(rows[0].request).toMatchObject({ formats: ['markdown'], content_retention: 600 });

    const scheduled = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['https://keep.example/'], depth: 0, interval: '1h', formats: ['markdown'], content_retention: 86_400 } });
    expect(scheduled.statusCode).toBe(202);
    const view = await api.app.inject({ method: 'GET', url: `/schedules/${scheduled.json().schedule_id}`, headers: auth });
    expect(view.json().request).toMatchObject({ formats: ['markdown'], content_retention: 86_400 });
    const patched = await api.app.inject({
      method: 'PATCH', url: `/schedules/${scheduled.json().schedule_id}`, headers: auth,
      payload: { request: { start_urls: ['https://keep.example/'], depth: 0, formats: ['text'], content_retention: 90_000 } },
    });
    expect(patched.json().error.code).toBe('RETENTION_TOO_LONG');
  });

  it('the sweep deletes the content of jobs past their retention, keeps what a live job names, and deletes a shared object once its last job has expired', async () => {
    const { user, auth } = await api.user();
    const schedule = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['https://keep.example/'], depth: 0, interval: '1h', content_retention: 1 } });
    const [ownA, ownB, shared, ownD, ownE] = await Promise.all(['own-a', 'own-b', 'shared', 'own-d', 'own-e'].map(page));
    // A: asked 1 s, ended 30 s ago; shares an object with C.
    const a = await apiJob(user, { start_urls: ['https://keep.example/'], content_retention: 1 }, 30);
    const aOwn = await seedContentPage(a, ownA!);
    await seedContentPage(a, shared!);
    // B: a run of a schedule that asks 1 s, ended 30 s ago.
    const b = await seedJob(api.db.pool, { user_id: user, status: 'finished', schedule_id: schedule.json().schedule_id, requested_at: new Date(Date.now() - 35_000) });
    await seedContentPage(b, ownB!);
    // C: the default (an hour), ended 30 s ago: it keeps the shared object alive.
    const c = await apiJob(user, { start_urls: ['https://keep.example/'] }, 30);
    const cShared = await seedContentPage(c, shared!);
    // D: asked 1 s but still running.
    const d = await apiJob(user, { start_urls: ['https://keep.example/'], content_retention: 1 }, null);
    await seedContentPage(d, ownD!);
    // E: asked more than the maximum before it was lowered; capped at a day, not yet over.
    const e = await apiJob(user, { start_urls: ['https://keep.example/'], content_retention: 10_000_000 }, 30);
    await seedContentPage(e, ownE!);

    const sweep = new RetentionSweep({ pool: api.db.pool, store, config: { ...RETENTION, sweepMs: 200 } });
    sweep.start();
    try {
      await eventually(async () => (await api.db.pool.query('SELECT count(*)::int AS n FROM job_content_deletions WHERE job_id = ANY ($1) AND deleted_at IS NOT NULL', [[a, b]])).rows[0].n === 2, 30_000);
    } finally {
      await sweep.stop();
    }
    expect(await stored(ownA!)).toBe(false);
    expect(await stored(ownB!)).toBe(false);
    expect(await stored(shared!)).toBe(true);
    expect(await stored(ownD!)).toBe(true);
    expect(await stored(ownE!)).toBe(true);
    const { rows } = await api.db.pool.query('SELECT job_id, reason, deleted_objects FROM job_content_deletions WHERE job_id = ANY ($1) ORDER BY deleted_objects', [[a, b, c, d, e]]);
    expect(rows).toEqual(expect.arrayContaining([{ job_id: a, reason: 'retention', deleted_objects: 2 }, { job_id: b, reason: 'retention', deleted_objects: 2 }]));
    expect(rows).toHaveLength(2);
    expect((await api.app.inject({ method: 'GET', url: `/jobs/${a}/pages/${aOwn}/content?format=markdown`, headers: auth })).json().error.code).toBe('CONTENT_NOT_FOUND');
    expect((await api.app.inject({ method: 'GET', url: `/jobs/${c}/pages/${cShared}/content?format=markdown`, headers: auth })).statusCode).toBe(200);
    expect(await sweep.sweepOnce()).toEqual({ jobs: 0, objects: 0 });

    // C's hour runs out: the shared object has no live job left, and goes.
    await api.db.pool.query("UPDATE jobs SET finished_at = now() - interval '2 hours' WHERE job_id = $1", [c]);
    expect(await sweep.sweepOnce()).toEqual({ jobs: 1, objects: 2 });
    expect(await stored(shared!)).toBe(false);
    expect(await stored(ownD!)).toBe(true);
    expect(await stored(ownE!)).toBe(true);
  });
});
