/**
 * Changing a schedule and reading its history, against the real Postgres: PATCH moves `next_run`
 * to the new cadence (read in its time zone), checks what POST checks (the minimum interval, the
 * cron, the time zone, the spider) and changes nothing when it refuses; `GET /schedules/:id/jobs`
 * pages through the schedule's jobs newest first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './support.ts';
import { seedJob } from './read-model.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

type Headers = Record<string, string>;
const get = (url: string, headers: Headers) => api.app.inject({ method: 'GET', url, headers });
const patch = (url: string, headers: Headers, payload: object) => api.app.inject({ method: 'PATCH', url, headers, payload });

async function hourly(auth: Headers): Promise<string> {
  const res = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['http://a.test/'], depth: 0, interval: '0 * * * *' } });
  expect(res.statusCode).toBe(202);
  return res.json().schedule_id;
}

describe('PATCH /schedules/:id', () => {
  it('a PATCHed cron moves next_run, and the time zone places it', async () => {
    const { auth } = await api.user();
    const id = await hourly(auth);
    const before = (await get(`/schedules/${id}`, auth)).json();
    expect(before).toMatchObject({ cron: '0 * * * *', time_zone: 'UTC', overlap: 'skip' });
    expect(new Date(before.next_run).getUTCMinutes()).toBe(0);

    const moved = await patch(`/schedules/${id}`, auth, { interval: '17 * * * *' });
    expect(moved.statusCode).toBe(200);
    const view = moved.json();
    expect(view.cron).toBe('17 * * * *');
    expect(new Date(view.next_run).getUTCMinutes()).toBe(17);
    expect(new Date(view.next_run).getTime()).toBeGreaterThan(Date.now());
    expect(new Date(view.next_run).getTime() - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(view.next_runs[0]).toBe(view.next_run);

    // 09:00 in Tokyo (no DST) is 00:00Z.
    const tokyo = (await patch(`/schedules/${id}`, auth, { interval: '0 9 * * *', time_zone: 'Asia/Tokyo', overlap: 'queue' })).json();
    expect(tokyo).toMatchObject({ cron: '0 9 * * *', time_zone: 'Asia/Tokyo', overlap: 'queue' });
    for (const run of tokyo.next_runs) expect(new Date(run).toISOString()).toMatch(/T00:00:00\.000Z$/);
    const { rows } = await api.db.pool.query('SELECT next_due, time_zone, overlap FROM schedules WHERE id = $1', [id]);
    expect(rows[0]).toMatchObject({ time_zone: 'Asia/Tokyo', overlap: 'queue' });
    expect(rows[0].next_due.toISOString()).toBe(tokyo.next_run);
  });

  it('an interval, a one-shot time and a new request', async () => {
    const { auth } = await api.user();
    const id = await hourly(auth);
    const every = (await patch(`/schedules/${id}`, auth, { interval: '2h' })).json();
    expect(every).toMatchObject({ cron: null, interval_ms: 7_200_000 });
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const once = (await patch(`/schedules/${id}`, auth, { interval: null, schedule_at: at })).json();
    expect(once).toMatchObject({ cron: null, interval_ms: null, next_run: at, next_runs: [at] });
    const res = await patch(`/schedules/${id}`, auth, { request: { start_urls: ['http://b.test/x'], depth: 1, max_pages: 7 } });
    expect(res.json().request).toMatchObject({ start_urls: ['http://b.test/x'], depth: 1, max_pages: 7 });
    expect(res.json().next_run).toBe(at);
  });

  it.each([
    [{ interval: '30s' }, 'INTERVAL_TOO_SHORT', 'interval'],
    [{ interval: '*/10 * * * * *' }, 'INTERVAL_TOO_SHORT', 'interval'],
    [{ interval: 'every day' }, 'INVALID_CRON', 'interval'],
    [{ time_zone: 'Mars/Olympus' }, 'INVALID_TIME_ZONE', 'time_zone'],
    [{ schedule_at: '2001-01-01T00:00:00Z' }, 'SCHEDULE_IN_PAST', 'schedule_at'],
    [{ interval: null }, 'VALIDATION_FAILED', 'interval'],
    [{ overlap: 'sometimes' }, 'VALIDATION_FAILED', 'overlap'],
    [{ request: { start_urls: ['http://a.test/'], depth: 0, spider: 'nobody-has-this' } }, 'UNKNOWN_SPIDER', 'spider'],
    [{}, 'VALIDATION_FAILED', undefined],
  ])('%j is refused with %s and changes nothing', async (body, code, field) => {
    const { auth } = await api.user();
    const id = await hourly(auth);
    const before = (await api.db.pool.query('SELECT * FROM schedules WHERE id = $1', [id])).rows[0];
    const res = await patch(`/schedules/${id}`, auth, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe(code);
    if (field) expect(res.json().error.field).toBe(field);
    expect((await api.db.pool.query('SELECT * FROM schedules WHERE id = $1', [id])).rows[0]).toEqual(before);
  });

  it("another user's schedule is not found, and a cancelled one cannot change", async () => {
    const { auth } = await api.user();
    const { auth: other } = await api.user();
    const id = await hourly(auth);
    expect((await patch(`/schedules/${id}`, other, { interval: '2h' })).json().error.code).toBe('SCHEDULE_NOT_FOUND');
    await api.app.inject({ method: 'POST', url: `/schedules/${id}/cancel`, headers: auth });
    const res = await patch(`/schedules/${id}`, auth, { interval: '2h' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('SCHEDULE_NOT_ACTIVE');
  });

  it('POST /crawl takes the time zone and overlap policy of a schedule, and refuses a bad zone', async () => {
    const { auth } = await api.user();
    const crawl = (payload: object) => api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['http://a.test/'], depth: 0, ...payload } });
    const ok = await crawl({ interval: '0 9 * * *', time_zone: 'Asia/Tokyo', overlap: 'allow' });
    expect(ok.statusCode).toBe(202);
    expect(new Date(ok.json().next_run).toISOString()).toMatch(/T00:00:00\.000Z$/);
    expect((await get(`/schedules/${ok.json().schedule_id}`, auth)).json()).toMatchObject({ time_zone: 'Asia/Tokyo', overlap: 'allow' });
    expect((await crawl({ interval: '1h', time_zone: 'Nowhere/Land' })).json().error).toMatchObject({ code: 'INVALID_TIME_ZONE', field: 'time_zone' });
  });
});

describe('GET /schedules/:id/jobs', () => {
  it("pages through the schedule's jobs newest first, and only the owner's", async () => {
    const { user, auth } = await api.user();
    const { auth: other } = await api.user();
    const id = await hourly(auth);
    const t0 = Date.parse('2030-05-01T00:00:00Z');
    const jobs: string[] = [];
    for (let i = 0; i < 5; i++) jobs.push(await seedJob(api.db.pool, { user_id: user, schedule_id: id, status: i === 4 ? 'running' : 'finished', requested_at: new Date(t0 + i * 60_000) }));
    await seedJob(api.db.pool, { user_id: user, schedule_id: null });
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await get(`/schedules/${id}/jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, auth);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      seen.push(...body.jobs.map((j: { job_id: string }) => j.job_id));
      for (const j of body.jobs) expect(j.schedule_id).toBe(id);
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([...jobs].reverse());
    expect((await get(`/schedules/${id}/jobs`, other)).json().error.code).toBe('SCHEDULE_NOT_FOUND');
  });
});
