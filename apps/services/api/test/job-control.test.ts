/**
 * The seed's API in full and job control: the view's spider/depth/max_pages/params/started_at,
 * `error` as a filter alias, the submit answers (status and logs URLs, the next slot's job id,
 * `?ignore_cache=true`), params checked against placeholders, pause/resume as events with their
 * refusals, and retry-failed as a new job over the failed pages. Real Postgres and Kafka.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedJob, seedPages } from './read-model.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

type Auth = { authorization: string };
const get = (url: string, headers: Auth) => api.app.inject({ method: 'GET', url, headers });
const post = (url: string, headers: Auth, payload?: object) => api.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });

describe('POST /crawl answers', () => {
  it('gives status and logs URLs with a new job, and the view shows the request in full', async () => {
    const { auth } = await api.user();
    const res = await post('/crawl', auth, { start_urls: ['http://a.test/search?q={{q}}'], depth: 2, max_pages: 40, params: { q: 'red shoes' } });
    expect(res.statusCode).toBe(200);
    const { job_id, status_url, logs_url } = res.json();
    expect(status_url).toBe(`/jobs/${job_id}/status`);
    expect(logs_url).toBe(`/jobs/${job_id}/logs`);
    const view = (await get(status_url, auth)).json();
    expect(view).toMatchObject({ job_id, spider: null, depth: 2, max_pages: 40, params: { q: 'red shoes' }, start_urls: ['http://a.test/search?q={{q}}'], retry_of: null });
    const dispatched = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === job_id);
    expect(dispatched?.body.params).toEqual({ q: 'red shoes' });
  });

  it('refuses a placeholder without a value, naming the start URL', async () => {
    const { auth } = await api.user();
    const res = await post('/crawl', auth, { start_urls: ['http://a.test/', 'http://a.test/c/{{cat}}'], depth: 0 });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'MISSING_PARAM', field: 'start_urls.1' });
  });

  it('takes ignore_cache from the query string', async () => {
    const { auth } = await api.user();
    const body = { start_urls: ['http://a.test/q'], depth: 0 };
    const first = (await post('/crawl', auth, body)).json();
    expect((await post('/crawl', auth, body)).json()).toMatchObject({ job_id: first.job_id, cached: true });
    const fresh = (await post('/crawl?ignore_cache=true', auth, body)).json();
    expect(fresh.cached).toBe(false);
    expect(fresh.job_id).not.toBe(first.job_id);
  });

  it("gives the next slot's job id with every 202, repeating schedules included", async () => {
    const { auth } = await api.user();
    const res = await post('/crawl', auth, { start_urls: ['http://a.test/r'], depth: 0, interval: '1h' });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ scheduled: true, job_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });
});

describe('GET /jobs filters and view', () => {
  it('reads `error` as `failed` and shows started_at', async () => {
    const { user, auth } = await api.user();
    const failed = await seedJob(api.db.pool, { user_id: user, status: 'failed' });
    await seedJob(api.db.pool, { user_id: user, status: 'finished' });
    const listed = (await get('/jobs?status=error', auth)).json().jobs;
    expect(listed.map((j: { job_id: string }) => j.job_id)).toEqual([failed]);
    expect(listed[0].started_at).toEqual(expect.any(String));
  });
});

describe('POST /jobs/:id/pause and /resume', () => {
  it('emits JobPaused and JobResumed, and refuses what does not fit the status', async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user, status: 'running' });
    expect((await post(`/jobs/${id}/resume`, auth)).json().error.code).toBe('JOB_NOT_PAUSABLE');
    const paused = await post(`/jobs/${id}/pause`, auth);
    expect(paused.statusCode).toBe(202);
    expect(paused.json()).toEqual({ job_id: id, status: 'pausing' });
    expect(api.sent.filter((e) => e.name === 'JobPaused' && e.body.job_id === id)).toHaveLength(1);

    await api.db.pool.query(`UPDATE jobs SET status = 'paused' WHERE job_id = $1`, [id]);
    expect((await get(`/jobs/${id}/status`, auth)).json().status).toBe('paused');
    expect((await get('/jobs?status=paused', auth)).json().jobs.map((j: { job_id: string }) => j.job_id)).toEqual([id]);
    expect((await post(`/jobs/${id}/pause`, auth)).json().error.code).toBe('JOB_NOT_PAUSABLE');
    const resumed = await post(`/jobs/${id}/resume`, auth);
    expect(resumed.json()).toEqual({ job_id: id, status: 'resuming' });
    expect(api.sent.filter((e) => e.name === 'JobResumed' && e.body.job_id === id)).toHaveLength(1);

    const over = await seedJob(api.db.pool, { user_id: user, status: 'finished' });
    expect((await post(`/jobs/${over}/pause`, auth)).json().error.code).toBe('JOB_ALREADY_FINISHED');
  });
});

describe('POST /jobs/:id/retry-failed', () => {
  it('starts a new job over the failed pages, linked to the first, once per dedupe TTL', async () => {
    const { user, auth } = await api.user();
    const running = await seedJob(api.db.pool, { user_id: user, status: 'running' });
    expect((await post(`/jobs/${running}/retry-failed`, auth)).json().error.code).toBe('JOB_NOT_FINISHED');
    const clean = await seedJob(api.db.pool, { user_id: user, status: 'finished' });
    expect((await post(`/jobs/${clean}/retry-failed`, auth)).json().error.code).toBe('NO_FAILED_PAGES');

    const id = await seedJob(api.db.pool, { user_id: user, status: 'finished' });
    await seedPages(api.db.pool, id, 8);
    const res = await post(`/jobs/${id}/retry-failed`, auth);
    expect(res.statusCode).toBe(200);
    const retry = res.json();
    expect(retry).toMatchObject({ cached: false, retry_of: id, max_pages: 2 });
    const requested = api.sent.find((e) => e.name === 'CrawlRequested' && e.body.job_id === retry.job_id)!;
    expect(requested.body).toMatchObject({ start_urls: ['http://a.test/p3', 'http://a.test/p7'], depth: 0, retry_of: id });
    expect((await get(`/jobs/${retry.job_id}/status`, auth)).json()).toMatchObject({ retry_of: id, depth: 0 });
    expect((await post(`/jobs/${id}/retry-failed`, auth)).json()).toMatchObject({ job_id: retry.job_id, cached: true });
  });
});
