/**
 * Scheduled and periodic crawls end to end: POST /crawl creates the schedule, the real dispatcher
 * (ticked here) turns due slots into jobs on Kafka, the API's live feed shows them to their owner;
 * pause, resume and cancel take effect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { Dispatcher } from '@trawl/dispatcher';
import { DEFAULT_QUOTAS } from '@trawl/store';
import { eventually, sleep, startTestApi, type TestApi } from './support.ts';

let api: TestApi;
let dispatcher: Dispatcher;
let wsBase: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  // Schedules every 2 s keep these tests short: the minimum interval (tested in quotas.test.ts) is lifted.
  const quotas = { ...DEFAULT_QUOTAS, min_interval_seconds: 0 };
  api = await startTestApi({ live: true, config: { quotas } });
  dispatcher = new Dispatcher({ pool: api.db.pool, producer: api.producer, logger: api.logger, quotas });
  wsBase = (await api.app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
  await api.app.liveFeed.ready;
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await api?.close();
});

async function feed(headers: Record<string, string>) {
  const ws = new WebSocket(`${wsBase}/events?types=JobDispatched`, { headers });
  sockets.push(ws);
  const dispatched: { job_id: string; data: { schedule_id: string; start_urls: string[]; spec: { max_depth: number } } }[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.type === 'event') dispatched.push(m);
  });
  await new Promise((r) => ws.once('open', r));
  return dispatched;
}

/**
 * Ticks the dispatcher as if it were `at` (ms since the epoch): what is due then is dispatched,
 * whatever the machine's speed. Returns how many jobs it dispatched.
 */
async function tickAt(at: number): Promise<number> {
  return (await dispatcher.tick(new Date(at))).dispatched;
}

/** Sleeps until the wall clock has passed `at` (a schedule resumed later starts after it). */
async function sleepUntil(at: number): Promise<void> {
  if (Date.now() <= at) await sleep(at - Date.now() + 1);
}

const get = (url: string, headers: Record<string, string>) => api.app.inject({ method: 'GET', url, headers });
const post = (url: string, headers: Record<string, string>, payload?: object) => api.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });

describe('scheduled crawls', () => {
  it('a crawl scheduled a few seconds ahead runs once, as the job id the API announced', async () => {
    const { auth } = await api.user();
    const dispatched = await feed(auth);
    const at = new Date(Date.now() + 2_000);
    const res = await post('/crawl', auth, { start_urls: ['http://a.test/later'], depth: 2, schedule_at: at.toISOString() });
    expect(res.statusCode).toBe(202);
    const { schedule_id, job_id, next_run } = res.json();
    expect(next_run).toBe(at.toISOString());

    expect(await tickAt(at.getTime() - 1)).toBe(0);
    expect(await tickAt(at.getTime())).toBe(1);
    expect(await tickAt(at.getTime() + 60_000)).toBe(0);

    const schedule = (await get(`/schedules/${schedule_id}`, auth)).json();
    expect(schedule).toMatchObject({ status: 'done', last_job_id: job_id, next_run: null, next_runs: [] });
    const seen = await eventually(async () => dispatched.find((d) => d.job_id === job_id));
    expect(seen.data).toMatchObject({ schedule_id, start_urls: ['http://a.test/later'], spec: { max_depth: 2 } });
  });

  it('a cancelled scheduled crawl never runs', async () => {
    const { auth } = await api.user();
    const at = new Date(Date.now() + 1_000);
    const { schedule_id } = (await post('/crawl', auth, { start_urls: ['http://a.test/never'], depth: 0, schedule_at: at.toISOString() })).json();
    const cancelled = await post(`/schedules/${schedule_id}/cancel`, auth);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', next_runs: [] });
    expect(await tickAt(at.getTime())).toBe(0);
    expect(await tickAt(at.getTime() + 60_000)).toBe(0);
    expect((await post(`/schedules/${schedule_id}/resume`, auth)).json().error.code).toBe('SCHEDULE_NOT_ACTIVE');
  });

  it('a periodic crawl (6-field seconds cron) runs every slot, pauses, resumes and cancels', async () => {
    const { auth } = await api.user();
    const dispatched = await feed(auth);
    // `allow`: no frontier runs here, so no job ever ends, and the default `skip` would skip every slot after the first.
    const res = await post('/crawl', auth, { start_urls: ['http://a.test/every2s'], depth: 1, interval: '*/2 * * * * *', overlap: 'allow' });
    expect(res.statusCode).toBe(202);
    const { schedule_id } = res.json();
    const listed = (await get('/schedules', auth)).json().schedules;
    expect(listed).toEqual([expect.objectContaining({ schedule_id, status: 'active', cron: '*/2 * * * * *' })]);
    const runs = listed[0].next_runs.map((d: string) => Date.parse(d));
    expect(runs).toHaveLength(5);
    expect(runs[1] - runs[0]).toBe(2_000);

    // Each slot ticked at its own time, once the clock has passed it: one job per slot.
    for (const slot of runs.slice(0, 2)) {
      await sleepUntil(slot);
      expect(await tickAt(slot)).toBe(1);
    }
    const mine = await eventually(async () => (dispatched.filter((d) => d.data.schedule_id === schedule_id).length >= 2 ? dispatched : undefined));
    expect(new Set(mine.map((d) => d.job_id)).size).toBe(mine.length);

    expect((await post(`/schedules/${schedule_id}/pause`, auth)).json()).toMatchObject({ status: 'paused', next_runs: [] });
    expect((await post(`/schedules/${schedule_id}/pause`, auth)).statusCode).toBe(409);
    expect(await tickAt(runs[2] + 10_000)).toBe(0);

    // Resumed: the next run is a slot after the clock, so after the slots already dispatched.
    const resumed = (await post(`/schedules/${schedule_id}/resume`, auth)).json();
    const answeredAt = Date.now();
    expect(resumed.status).toBe('active');
    const next = Date.parse(resumed.next_run);
    expect(next).toBeGreaterThan(runs[1]);
    expect(next).toBeLessThanOrEqual(answeredAt + 2_000);
    await sleepUntil(next);
    expect(await tickAt(next)).toBe(1);

    expect((await post(`/schedules/${schedule_id}/cancel`, auth)).json().status).toBe('cancelled');
    expect(await tickAt(next + 60_000)).toBe(0);
    expect((await get(`/schedules/${schedule_id}`, auth)).json()).toMatchObject({ status: 'cancelled', last_job_id: expect.any(String) });
  });
});
