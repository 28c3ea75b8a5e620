/**
 * Per-user quotas at the API, against the real stack: active jobs, pages a day (a job capped to
 * what is left, then 429), schedules, the minimum interval (400) — each refusal with its documented
 * code and the limit it names, emitting nothing and changing nothing — and `GET /quotas`. A
 * schedule the dispatcher paused shows why in its API view.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dispatcher } from '@trawl/dispatcher';
import { crawlSpec, DEFAULT_QUOTAS, upsertWebsite } from '@trawl/store';
import { DEFAULT_WEBHOOK_QUOTAS, setUserWebhookQuotas } from '@trawl/store';
import { seedJob } from './read-model.ts';
import { startTestApi, type TestApi } from './support.ts';

const quotas = { active_jobs: 2, pages_per_day: 150, schedules: 2, min_interval_seconds: 60, storage_bytes: 5000 };
const retention = { content_retention_max_seconds: 90 * 86_400, content_retention_default_seconds: 30 * 86_400 };
// Webhook limits and use (the defaults; nothing used).
const webhooks = { limits: DEFAULT_WEBHOOK_QUOTAS, usage: { webhooks: 0, webhook_tests_last_hour: 0, webhook_deliveries_last_hour: 0 } };
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ config: { quotas } });
});
afterAll(async () => {
  await api?.close();
});

const crawl = (auth: Record<string, string>, body: object) => api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: body });
let n = 0;
const urls = () => [`http://a.test/q${n++}`];

describe('quotas', () => {
  it('active_jobs: the third running job is refused with 429 QUOTA_EXCEEDED, and room comes back when one ends', async () => {
    const { user, auth } = await api.user('busy');
    const first = (await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 10 })).json();
    const second = await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 10 });
    expect(second.statusCode).toBe(200);
    const before = api.emitted.length;
    const third = await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 10 });
    expect(third.statusCode).toBe(429);
    expect(third.json().error).toMatchObject({ code: 'QUOTA_EXCEEDED', message: expect.stringContaining('active_jobs'), limit: { name: 'active_jobs', value: 2, used: 2 } });
    expect(api.emitted.length).toBe(before);
    // A repeat of a running job is answered from the dedupe cache: no new job, no quota.
    expect((await crawl(auth, { start_urls: [`http://a.test/q${n - 3}`], depth: 0, max_pages: 10 })).json()).toMatchObject({ cached: true });
    // The projector shows the first job over: it stops counting as active.
    await seedJob(api.db.pool, { job_id: first.job_id, user_id: user, status: 'finished', pages_fetched: 3 });
    expect((await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 10 })).statusCode).toBe(200);
  });

  it("pages_per_day: a job gets what is left of the day's pages, then the next is refused", async () => {
    const { auth } = await api.user('pages');
    const a = (await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 100 })).json();
    expect(a).toMatchObject({ cached: false, max_pages: 100 });
    const b = (await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 100 })).json();
    expect(b).toMatchObject({ cached: false, max_pages: 50 });
    const dispatched = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === b.job_id)!;
    expect((dispatched.body.spec as { max_pages: number }).max_pages).toBe(50);
    const quota = await api.app.inject({ method: 'GET', url: '/quotas', headers: auth });
    expect(quota.json()).toEqual({ limits: { ...quotas, ...retention, ...webhooks.limits }, usage: { active_jobs: 2, pages_today: 150, schedules: 0, storage_bytes: 0, ...webhooks.usage } });
  });

  it('pages_per_day used up: 429 naming it', async () => {
    const { user, auth } = await api.user('spent');
    const a = (await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 150 })).json();
    await seedJob(api.db.pool, { job_id: a.job_id, user_id: user, status: 'finished', pages_fetched: 150 });
    const res = await crawl(auth, { start_urls: urls(), depth: 0, max_pages: 1 });
    expect(res.statusCode).toBe(429);
    expect(res.json().error).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'pages_per_day', value: 150, used: 150 } });
  });

  it('schedules: the third is refused with 429 QUOTA_EXCEEDED; cancelling one makes room', async () => {
    const { auth } = await api.user('planner');
    const ids = [];
    for (let i = 0; i < 2; i++) {
      const res = await crawl(auth, { start_urls: urls(), depth: 0, interval: '1h' });
      expect(res.statusCode).toBe(202);
      ids.push(res.json().schedule_id);
    }
    const third = await crawl(auth, { start_urls: urls(), depth: 0, interval: '1h' });
    expect(third.statusCode).toBe(429);
    expect(third.json().error).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'schedules', value: 2, used: 2 } });
    await api.app.inject({ method: 'POST', url: `/schedules/${ids[0]}/cancel`, headers: auth });
    expect((await crawl(auth, { start_urls: urls(), depth: 0, interval: '1h' })).statusCode).toBe(202);
  });

  it.each([['1s'], ['59s'], ['*/10 * * * * *'], ['0,30 * * * * *']])('an interval of %j is refused with 400 INTERVAL_TOO_SHORT naming the limit', async (interval) => {
    const { user, auth } = await api.user('eager');
    const res = await crawl(auth, { start_urls: urls(), depth: 0, interval });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INTERVAL_TOO_SHORT', field: 'interval', message: expect.stringContaining('min_interval_seconds'), limit: { name: 'min_interval_seconds', value: 60 } });
    const { rows } = await api.db.pool.query('SELECT count(*)::int AS n FROM schedules WHERE owner_id = $1', [user]);
    expect(rows[0].n).toBe(0);
    expect((await crawl(auth, { start_urls: urls(), depth: 0, interval: '1m' })).statusCode).toBe(202);
  });

  it("storage_bytes: GET /quotas shows the content a user's jobs keep against the quota and the retention ceiling; deleted content frees it, another user's never counts", async () => {
    const { user, auth } = await api.user('keeper');
    const other = await api.user('bystander');
    const job = await seedJob(api.db.pool, { user_id: user, status: 'running' });
    const stranger = await seedJob(api.db.pool, { user_id: other.user, status: 'running' });
    const page = (jobId: string, fetchId: string, content: string | null, formats: object[], fromCache: string | null = null) =>
      api.db.pool.query(
        `INSERT INTO job_pages (job_id, fetch_id, url, final_url, status, content_type, bytes, fetch_ms, depth, render_mode, ok, attempts, fetched_at, event_id, content_hash, formats, from_cache)
         VALUES ($1, $2, $3, $3, 200, 'text/html', 1500, 5, 0, 'http', true, 1, now(), $2, $4, $5, $6)`,
        [jobId, fetchId, `http://a.test/${fetchId}`, content, JSON.stringify(formats), fromCache],
      );
    // 1200 bytes of body (its html format) + 400 of markdown; a body kept for the cache (1500, the page's bytes); a 304 counts nothing.
    await page(job, 'f1', 'a'.repeat(64), [{ format: 'html', hash: 'a'.repeat(64), bytes: 1200 }, { format: 'markdown', hash: 'b'.repeat(64), bytes: 400 }]);
    await page(job, 'f2', 'c'.repeat(64), []);
    await page(job, 'f3', 'd'.repeat(64), [], 'not_modified');
    await page(stranger, 'f1', 'e'.repeat(64), [{ format: 'html', hash: 'e'.repeat(64), bytes: 9999 }]);
    const read = async (a: Record<string, string>) => (await api.app.inject({ method: 'GET', url: '/quotas', headers: a })).json();
    const mine = await read(auth);
    expect(mine.limits).toMatchObject({ storage_bytes: 5000, content_retention_max_seconds: 90 * 86_400, content_retention_default_seconds: 30 * 86_400 });
    expect(mine.usage.storage_bytes).toBe(1200 + 400 + 1500);
    expect((await read(other.auth)).usage.storage_bytes).toBe(9999);
    // The job ends and its content is deleted (as retention would): nothing counts any more.
    await api.db.pool.query("UPDATE jobs SET status = 'finished', finished_at = now() WHERE job_id = $1", [job]);
    expect((await api.app.inject({ method: 'DELETE', url: `/jobs/${job}/content`, headers: auth })).statusCode).toBeLessThan(300);
    expect((await read(auth)).usage.storage_bytes).toBe(0);
    expect((await read(other.auth)).usage.storage_bytes).toBe(9999);
  });

  it("webhook limits: GET /quotas shows the user's webhooks, test and re-delivery calls and deliveries of the last hour against their limits; another user's never count", async () => {
    const { user, auth } = await api.user('hooked');
    const other = await api.user('unhooked');
    await setUserWebhookQuotas(api.db.pool, user, { webhooks: 5, webhook_deliveries_per_hour: 500 });
    // A subscription as POST /webhooks writes it (its URL check needs DNS, tested in webhooks.test.ts).
    const hook = randomUUID();
    await api.db.pool.query("INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, 'https://hooks.example.com/q', '{job.completed}', 'sealed')", [hook, user]);
    expect((await api.app.inject({ method: 'POST', url: `/webhooks/${hook}/test`, headers: auth })).statusCode).toBe(202);
    // What apps/services/webhooks counted: 40 deliveries this minute, 7 twenty minutes ago, 100 two hours ago (out of the hour).
    await api.db.pool.query(
      `INSERT INTO webhook_usage (user_id, minute, deliveries) VALUES
         ($1, date_trunc('minute', now()), 40), ($1, date_trunc('minute', now()) - interval '20 minutes', 7), ($1, date_trunc('minute', now()) - interval '2 hours', 100)
       ON CONFLICT (user_id, minute) DO UPDATE SET deliveries = webhook_usage.deliveries + EXCLUDED.deliveries`,
      [user],
    );
    const mine = (await api.app.inject({ method: 'GET', url: '/quotas', headers: auth })).json();
    expect(mine.limits).toMatchObject({ webhooks: 5, webhook_tests_per_hour: DEFAULT_WEBHOOK_QUOTAS.webhook_tests_per_hour, webhook_deliveries_per_hour: 500 });
    expect(mine.usage).toMatchObject({ webhooks: 1, webhook_tests_last_hour: 1, webhook_deliveries_last_hour: 47 });
    const theirs = (await api.app.inject({ method: 'GET', url: '/quotas', headers: other.auth })).json();
    expect(theirs.limits).toMatchObject(DEFAULT_WEBHOOK_QUOTAS);
    expect(theirs.usage).toMatchObject(webhooks.usage);
  });

  it('POST /schedules checks the same quotas', async () => {
    const { auth } = await api.user('targeter');
    const site = (await api.app.inject({ method: 'POST', url: '/websites', headers: auth, payload: { name: 'S', base_url: 'http://a.test/' } })).json();
    const target = (await api.app.inject({ method: 'POST', url: '/targets', headers: auth, payload: { website_id: site.id, url_template: 'http://a.test/?q={keywords}' } })).json();
    const schedule = (interval: string) => api.app.inject({ method: 'POST', url: '/schedules', headers: auth, payload: { target_id: target.id, interval } });
    expect((await schedule('5s')).json().error.code).toBe('INTERVAL_TOO_SHORT');
    expect((await schedule('1h')).statusCode).toBe(201);
    expect((await schedule('2h')).statusCode).toBe(201);
    expect((await schedule('3h')).json().error).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'schedules' } });
  });
});

describe('a schedule paused by the dispatcher', () => {
  it('says why in its API view, and a resume clears it', async () => {
    const alice = await api.user('alice');
    const site = `site-${Date.now()}`;
    await api.app.inject({ method: 'PUT', url: `/websites/${site}`, headers: alice.auth, payload: { name: 'Shop', base_url: 'http://a.test/' } });
    const { schedule_id } = (await crawl(alice.auth, { spider: site, start_urls: urls(), depth: 0, interval: '1h' })).json();
    // Alice deletes her website; another user takes the id.
    expect((await api.app.inject({ method: 'DELETE', url: `/websites/${site}`, headers: alice.auth })).statusCode).toBe(204);
    await upsertWebsite(api.db.pool, { ...crawlSpec(null), id: site, owner_id: 'mallory', name: 'Not yours', base_url: 'http://m.test/', next_link_selector: null, page_param: null, item_root: null });
    await api.db.pool.query("UPDATE schedules SET next_due = now() - interval '1 second' WHERE id = $1", [schedule_id]);
    const dispatcher = new Dispatcher({ pool: api.db.pool, producer: api.producer, logger: api.logger, quotas: DEFAULT_QUOTAS });
    expect(await dispatcher.tick()).toMatchObject({ dispatched: 0, paused: 1 });

    const view = (await api.app.inject({ method: 'GET', url: `/schedules/${schedule_id}`, headers: alice.auth })).json();
    expect(view).toMatchObject({
      status: 'paused',
      next_run: null,
      paused_reason: { code: 'WEBSITE_NOT_OWNED', message: `website "${site}" now belongs to another user`, at: expect.any(String) },
    });
    const resumed = (await api.app.inject({ method: 'POST', url: `/schedules/${schedule_id}/resume`, headers: alice.auth })).json();
    expect(resumed).toMatchObject({ status: 'active', paused_reason: null });
  });
});
