/**
 * POST /crawl against the real Postgres and Kafka: immediate crawls, the dedupe rules (including
 * 20 concurrent identical requests → one job), spiders, and schedules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertWebsite, crawlSpec, jobIdForSlot } from '@trawl/store';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ config: { dedupeTtlSeconds: 3600 } });
});
afterAll(async () => {
  await api?.close();
});

const URL_A = 'http://127.0.0.1:8090/jobs?page=1';

async function crawl(auth: object, payload: object) {
  return api.app.inject({ method: 'POST', url: '/crawl', headers: auth as Record<string, string>, payload });
}

describe('POST /crawl now', () => {
  it('creates a job, answers 200 {job_id, scheduled:false, cached:false, max_pages}, and the job is readable at once', async () => {
    const { auth } = await api.user();
    const res = await crawl(auth, { start_urls: [URL_A], depth: 1, max_pages: 10 });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      job_id: expect.stringMatching(/^[0-9a-f-]{36}$/), scheduled: false, cached: false, max_pages: 10,
      status_url: `/jobs/${body.job_id}/status`, logs_url: `/jobs/${body.job_id}/logs`,
    });
    const status = await api.app.inject({ method: 'GET', url: `/jobs/${body.job_id}/status`, headers: auth });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toMatchObject({ job_id: body.job_id, status: 'pending', start_urls: [URL_A] });
  });

  it('returns the same job with cached:true and cached_at for a repeat within the TTL', async () => {
    const { auth } = await api.user();
    const first = (await crawl(auth, { start_urls: [URL_A, 'http://127.0.0.1:8090/b'], depth: 2, params: { a: '1', b: '2' } })).json();
    const again = await crawl(auth, { start_urls: ['http://127.0.0.1:8090/b', URL_A], depth: 2, params: { b: '2', a: '1' }, max_pages: 5 });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({
      job_id: first.job_id, scheduled: false, cached: true, cached_at: expect.any(String),
      status_url: `/jobs/${first.job_id}/status`, logs_url: `/jobs/${first.job_id}/logs`,
    });
    expect(Date.now() - Date.parse(again.json().cached_at)).toBeLessThan(60_000);
  });

  it('makes a new job for another depth, other params, another user, or ignore_cache', async () => {
    const alice = await api.user();
    const bob = await api.user();
    const base = { start_urls: [URL_A], depth: 1 };
    const first = (await crawl(alice.auth, base)).json().job_id;
    const ids = [
      (await crawl(alice.auth, { ...base, depth: 2 })).json(),
      (await crawl(alice.auth, { ...base, params: { q: 'x' } })).json(),
      (await crawl(bob.auth, base)).json(),
      (await crawl(alice.auth, { ...base, ignore_cache: true })).json(),
    ];
    for (const r of ids) expect(r).toMatchObject({ cached: false });
    expect(new Set([first, ...ids.map((r) => r.job_id)]).size).toBe(5);
    // ignore_cache refreshed the dedupe row: the next plain repeat returns the newest job.
    const repeat = (await crawl(alice.auth, base)).json();
    expect(repeat).toMatchObject({ job_id: ids[3]!.job_id, cached: true });
  });

  it('creates exactly one job for 20 concurrent identical requests', async () => {
    const { auth, user } = await api.user();
    const payload = { start_urls: ['http://127.0.0.1:8090/concurrent'], depth: 1 };
    const results = await Promise.all(Array.from({ length: 20 }, () => crawl(auth, payload)));
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    const bodies = results.map((r) => r.json());
    expect(new Set(bodies.map((b) => b.job_id)).size).toBe(1);
    expect(bodies.filter((b) => !b.cached)).toHaveLength(1);
    expect(bodies.filter((b) => b.cached)).toHaveLength(19);
    const { rows } = await api.db.pool.query('SELECT count(*)::int AS n FROM api_jobs WHERE user_id = $1', [user]);
    expect(rows[0].n).toBe(1);
  });

  it('keeps the key for the configured TTL and makes a new job once it has passed', async () => {
    const short = await startTestApi({ config: { dedupeTtlSeconds: 90 } });
    try {
      const { auth, user } = await short.user();
      const payload = { start_urls: [URL_A], depth: 0 };
      const a = (await short.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload })).json();
      const b = (await short.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload })).json();
      expect(b).toMatchObject({ job_id: a.job_id, cached: true });
      const ttl = await short.db.pool.query('SELECT extract(epoch FROM expires_at - created_at)::int AS s FROM crawl_dedupe WHERE user_id = $1', [user]);
      expect(ttl.rows).toEqual([{ s: 90 }]);
      // The TTL passes (moved, rather than waited for: a wait would race the first request's own duration).
      await short.db.pool.query("UPDATE crawl_dedupe SET expires_at = now() - interval '1 millisecond' WHERE user_id = $1", [user]);
      const c = (await short.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload })).json();
      expect(c).toMatchObject({ cached: false });
      expect(c.job_id).not.toBe(a.job_id);
    } finally {
      await short.close();
    }
  });

  it('uses a spider (website) the caller can see, and refuses one they cannot', async () => {
    const alice = await api.user();
    const bob = await api.user();
    const spec = crawlSpec(null);
    await upsertWebsite(api.db.pool, {
      ...spec, id: `books-${alice.user}`, owner_id: alice.user, name: 'Books', base_url: 'http://127.0.0.1:8090/',
      next_link_selector: null, page_param: null, item_root: '.book',
    });
    const ok = await crawl(alice.auth, { spider: `books-${alice.user}`, start_urls: [URL_A], depth: 1 });
    expect(ok.statusCode).toBe(200);
    const refused = await crawl(bob.auth, { spider: `books-${alice.user}`, start_urls: [URL_A], depth: 1 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'UNKNOWN_SPIDER', field: 'spider' });
  });
});

describe('POST /crawl scheduled', () => {
  it('schedule_at answers 202 with schedule_id, next_run and the job id the dispatcher will use', async () => {
    const { auth } = await api.user();
    const at = new Date(Date.now() + 60_000);
    const res = await crawl(auth, { start_urls: [URL_A], depth: 1, schedule_at: at.toISOString() });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ scheduled: true, schedule_id: expect.any(String), next_run: at.toISOString() });
    expect(body.job_id).toBe(jobIdForSlot(body.schedule_id, at));
  });

  it('interval (cron or duration) answers 202 with the next run', async () => {
    const { auth } = await api.user();
    const cron = await crawl(auth, { start_urls: [URL_A], depth: 1, interval: '0 3 * * *' });
    expect(cron.statusCode).toBe(202);
    expect(new Date(cron.json().next_run).getUTCHours()).toBe(3);
    // The next slot's job, as the dispatcher derives it from the schedule and the slot.
    expect(cron.json().job_id).toBe(jobIdForSlot(cron.json().schedule_id, new Date(cron.json().next_run)));
    const every = await crawl(auth, { start_urls: [URL_A], depth: 1, interval: '90s' });
    expect(every.statusCode).toBe(202);
    expect(Date.parse(every.json().next_run) - Date.now()).toBeGreaterThan(80_000);
  });

  it('refuses an invalid cron and a schedule_at in the past', async () => {
    const { auth } = await api.user();
    const bad = await crawl(auth, { start_urls: [URL_A], depth: 1, interval: '61 * * * *' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'INVALID_CRON', field: 'interval' });
    const past = await crawl(auth, { start_urls: [URL_A], depth: 1, schedule_at: '2001-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(400);
    expect(past.json().error).toMatchObject({ code: 'SCHEDULE_IN_PAST', field: 'schedule_at' });
  });
});

describe('POST /crawl and the HTTP cache', () => {
  const dispatchedSpec = (jobId: string) => api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === jobId)?.body.spec as Record<string, unknown> | undefined;

  it('puts max_age and ignore_cache in the dispatched spec, ignore_cache from the body or the query string alike', async () => {
    const { auth } = await api.user();
    const plain = (await crawl(auth, { start_urls: [URL_A], depth: 1 })).json();
    expect(dispatchedSpec(plain.job_id)).toMatchObject({ max_age: null, ignore_cache: false });
    const fresh = (await crawl(auth, { start_urls: [`${URL_A}&fresh`], depth: 1, max_age: 3600 })).json();
    expect(dispatchedSpec(fresh.job_id)).toMatchObject({ max_age: 3600, ignore_cache: false });
    const body = (await crawl(auth, { start_urls: [`${URL_A}&body`], depth: 1, max_age: 60, ignore_cache: true })).json();
    expect(dispatchedSpec(body.job_id)).toMatchObject({ max_age: 60, ignore_cache: true });
    const query = await api.app.inject({ method: 'POST', url: '/crawl?ignore_cache=true', headers: auth, payload: { start_urls: [URL_A], depth: 1 } });
    // The query string bypasses the dedupe (a new job although `plain` is within the TTL) and the HTTP cache.
    expect(query.json()).toMatchObject({ cached: false });
    expect(query.json().job_id).not.toBe(plain.job_id);
    expect(dispatchedSpec(query.json().job_id)).toMatchObject({ ignore_cache: true });
  });

  it('puts the sitemap mode in the request and the dispatched spec (default include), a mode other than the default making another crawl', async () => {
    const { auth } = await api.user();
    const requested = (jobId: string) => api.sent.find((e) => e.name === 'CrawlRequested' && e.body.job_id === jobId)?.body as Record<string, unknown> | undefined;
    const plain = (await crawl(auth, { start_urls: [`${URL_A}&sm`], depth: 1 })).json();
    expect(dispatchedSpec(plain.job_id)).toMatchObject({ sitemap: 'include' });
    expect(requested(plain.job_id)).toMatchObject({ sitemap: 'include' });
    expect((await crawl(auth, { start_urls: [`${URL_A}&sm`], depth: 1, sitemap: 'include' })).json()).toMatchObject({ job_id: plain.job_id, cached: true });
    const only = (await crawl(auth, { start_urls: [`${URL_A}&sm`], depth: 1, sitemap: 'only' })).json();
    expect(only.job_id).not.toBe(plain.job_id);
    expect(dispatchedSpec(only.job_id)).toMatchObject({ sitemap: 'only' });
    expect(requested(only.job_id)).toMatchObject({ sitemap: 'only' });
    const bad = await crawl(auth, { start_urls: [URL_A], depth: 1, sitemap: 'all' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.field).toMatch(/sitemap/);
  });

  it('keeps no bodies for the cache in a crawl that runs once unless it asks (store_in_cache), and the same crawl either way (dedupe)', async () => {
    const { auth } = await api.user();
    const once = (await crawl(auth, { start_urls: [`${URL_A}&keep`], depth: 1 })).json();
    expect(dispatchedSpec(once.job_id)).toMatchObject({ store_in_cache: false });
    expect((await crawl(auth, { start_urls: [`${URL_A}&keep`], depth: 1, store_in_cache: true })).json()).toMatchObject({ job_id: once.job_id, cached: true });
    const kept = (await crawl(auth, { start_urls: [`${URL_A}&keep2`], depth: 1, store_in_cache: true })).json();
    expect(dispatchedSpec(kept.job_id)).toMatchObject({ store_in_cache: true });
    const bad = await crawl(auth, { start_urls: [URL_A], depth: 1, store_in_cache: 'yes' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.field).toMatch(/store_in_cache/);
  });

  it('treats a crawl that differs only in max_age as the same crawl (dedupe)', async () => {
    const { auth } = await api.user();
    const first = (await crawl(auth, { start_urls: [`${URL_A}&same`], depth: 1 })).json();
    expect((await crawl(auth, { start_urls: [`${URL_A}&same`], depth: 1, max_age: 600 })).json()).toMatchObject({ job_id: first.job_id, cached: true });
  });

  it('refuses a max_age that is not a whole number of seconds from 0 to a year', async () => {
    const { auth } = await api.user();
    for (const max_age of [-1, 1.5, 31_536_001, '60']) {
      const res = await crawl(auth, { start_urls: [URL_A], depth: 1, max_age });
      expect(res.statusCode, String(max_age)).toBe(400);
      expect(res.json().error.field).toMatch(/max_age/);
    }
  });

  it('keeps max_age and ignore_cache with a schedule\'s request, for its runs', async () => {
    const { auth } = await api.user();
    const res = await crawl(auth, { start_urls: [URL_A], depth: 1, interval: '1h', max_age: 900, ignore_cache: true });
    expect(res.statusCode).toBe(202);
    const schedule = await api.app.inject({ method: 'GET', url: `/schedules/${res.json().schedule_id}`, headers: auth });
    expect(schedule.json().request).toMatchObject({ max_age: 900, ignore_cache: true });
    expect(schedule.json().request.store_in_cache).toBeUndefined();
    const off = await crawl(auth, { start_urls: [URL_A], depth: 1, interval: '1h', store_in_cache: false });
    const offSchedule = await api.app.inject({ method: 'GET', url: `/schedules/${off.json().schedule_id}`, headers: auth });
    expect(offSchedule.json().request).toMatchObject({ store_in_cache: false });
  });

  it("keeps a sitemap mode with a schedule's request, for its runs", async () => {
    const { auth } = await api.user();
    const res = await crawl(auth, { start_urls: [URL_A], depth: 1, interval: '1h', sitemap: 'skip' });
    expect(res.statusCode).toBe(202);
    const schedule = await api.app.inject({ method: 'GET', url: `/schedules/${res.json().schedule_id}`, headers: auth });
    expect(schedule.json().request).toMatchObject({ sitemap: 'skip' });
  });
});
