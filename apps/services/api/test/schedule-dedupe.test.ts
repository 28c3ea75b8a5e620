/**
 * Optional dedupe of scheduled runs: a schedule made with `dedupe: true` through POST /crawl, ticked
 * by the real dispatcher on the API's database (its `crawl_dedupe`), against the real Kafka. A slot
 * whose request equals a crawl of the owner started within the TTL is answered from that job
 * (skipped, `DEDUPED: …`); a run that starts answers identical crawls; the schedule's own runs never
 * answer its slots; without `dedupe` nothing changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dispatcher } from '@trawl/dispatcher';
import { DEFAULT_QUOTAS, jobIdForSlot } from '@trawl/store';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
let dispatcher: Dispatcher;

beforeAll(async () => {
  const quotas = { ...DEFAULT_QUOTAS, min_interval_seconds: 0 };
  api = await startTestApi({ config: { quotas, dedupeTtlSeconds: 3_600 } });
  dispatcher = new Dispatcher({ pool: api.db.pool, producer: api.producer, logger: api.logger, quotas, dedupeTtlSeconds: 3_600 });
});
afterAll(async () => {
  await api?.close();
});

const get = (url: string, headers: Record<string, string>) => api.app.inject({ method: 'GET', url, headers });
const post = (url: string, headers: Record<string, string>, payload?: object) => api.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });

/** A schedule every 2 s of `request`; `overlap: allow`, since no job ends here (no frontier runs). */
async function schedule(auth: Record<string, string>, request: object, dedupe?: boolean) {
  const res = await post('/crawl', auth, { ...request, interval: '*/2 * * * * *', overlap: 'allow', ...(dedupe === undefined ? {} : { dedupe }) });
  expect(res.statusCode).toBe(202);
  const { schedule_id } = res.json() as { schedule_id: string };
  const view = (await get(`/schedules/${schedule_id}`, auth)).json() as { next_runs: string[]; dedupe: boolean };
  return { id: schedule_id, slots: view.next_runs.map((d) => new Date(d)), dedupe: view.dedupe };
}

const latest = (a: Date, b: Date) => (a > b ? a : b);

const view = async (id: string, auth: Record<string, string>) =>
  (await get(`/schedules/${id}`, auth)).json() as { last_job_id: string | null; skipped: { at: string; reason: string } | null; dedupe: boolean };

describe('scheduled runs with dedupe', () => {
  it('a slot whose request equals a crawl started within the TTL is answered from that job; without dedupe it runs', async () => {
    const { auth } = await api.user();
    const first = await post('/crawl', auth, { start_urls: ['http://a.test/x', 'http://a.test/y'], depth: 1 });
    expect(first.json()).toMatchObject({ cached: false });
    const answer = first.json().job_id as string;
    // The same crawl spelled otherwise (URL order, a fragment): the same dedupe key.
    const deduped = await schedule(auth, { start_urls: ['http://a.test/y#top', 'http://a.test/x'], depth: 1 }, true);
    const plain = await schedule(auth, { start_urls: ['http://a.test/x', 'http://a.test/y'], depth: 1 });
    expect([deduped.dedupe, plain.dedupe]).toEqual([true, false]);

    // Both due (made a moment apart, their first slots may differ by one).
    const slot = latest(deduped.slots[0]!, plain.slots[0]!);
    const r = await dispatcher.tick(slot);
    expect(r).toMatchObject({ dispatched: 1, skipped: 1, skips: { DEDUPED: 1 } });
    const d = await view(deduped.id, auth);
    expect(d.last_job_id).toBeNull();
    expect(d.skipped).toEqual({ at: slot.toISOString(), reason: expect.stringMatching(new RegExp(`^DEDUPED: answered by job ${answer}, an identical crawl started `)) });
    // The schedule without dedupe ran as ever.
    expect((await view(plain.id, auth)).last_job_id).toBe(jobIdForSlot(plain.id, slot));
  });

  it('a run that starts answers identical crawls until the TTL; its own runs never answer its slots', async () => {
    const { auth } = await api.user();
    const request = { start_urls: ['http://b.test/'], depth: 2, params: { q: 'shoes' } };
    const s = await schedule(auth, request, true);
    const [slot1, slot2, slot3] = s.slots as [Date, Date, Date];
    await dispatcher.tick(slot1);
    const run1 = jobIdForSlot(s.id, slot1);
    expect((await view(s.id, auth)).last_job_id).toBe(run1);
    // An immediate crawl of the same request is answered from the scheduled run.
    expect((await post('/crawl', auth, request)).json()).toMatchObject({ job_id: run1, cached: true });
    // The schedule's next slot runs: its cadence asks for a new run; the run becomes the answer.
    await dispatcher.tick(slot2);
    const run2 = jobIdForSlot(s.id, slot2);
    expect((await view(s.id, auth)).last_job_id).toBe(run2);
    expect((await post('/crawl', auth, request)).json()).toMatchObject({ job_id: run2, cached: true });
    // Past the TTL the entry is nobody's answer: the next identical crawl is a new job.
    await api.db.pool.query("UPDATE crawl_dedupe SET expires_at = now() - interval '1 second' WHERE job_id = $1", [run2]);
    const fresh = (await post('/crawl', auth, request)).json();
    expect(fresh).toMatchObject({ cached: false });
    // … which answers the schedule's next slot.
    await dispatcher.tick(slot3);
    expect((await view(s.id, auth)).skipped?.reason).toMatch(new RegExp(`^DEDUPED: answered by job ${fresh.job_id}`));
  });

  it("two schedules with dedupe due together: one runs, the other is answered from its run; another user's crawl answers nothing", async () => {
    const { auth } = await api.user();
    const other = await api.user();
    const request = { start_urls: ['http://c.test/'], depth: 0 };
    expect((await post('/crawl', other.auth, request)).json()).toMatchObject({ cached: false });
    const a = await schedule(auth, request, true);
    const b = await schedule(auth, request, true);
    const r = await dispatcher.tick(latest(a.slots[0]!, b.slots[0]!));
    expect(r).toMatchObject({ dispatched: 1, skipped: 1, skips: { DEDUPED: 1 } });
    const [va, vb] = [await view(a.id, auth), await view(b.id, auth)];
    const ran = va.last_job_id ?? vb.last_job_id;
    expect([va.last_job_id, vb.last_job_id].filter(Boolean)).toHaveLength(1);
    expect((va.skipped ?? vb.skipped)!.reason).toMatch(new RegExp(`^DEDUPED: answered by job ${ran}`));
  });

  it('is for scheduled crawls: an immediate crawl refuses it; PATCH turns it on and off', async () => {
    const { auth } = await api.user();
    const refused = await post('/crawl', auth, { start_urls: ['http://d.test/'], depth: 0, dedupe: true });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'BAD_REQUEST', field: 'dedupe' });
    const s = await schedule(auth, { start_urls: ['http://d.test/'], depth: 0 });
    const on = await api.app.inject({ method: 'PATCH', url: `/schedules/${s.id}`, headers: auth, payload: { dedupe: true } });
    expect(on.json()).toMatchObject({ dedupe: true });
    const changed = await api.app.inject({ method: 'PATCH', url: `/schedules/${s.id}`, headers: auth, payload: { time_zone: 'Europe/Berlin' } });
    expect(changed.json()).toMatchObject({ dedupe: true, time_zone: 'Europe/Berlin' });
    const off = await api.app.inject({ method: 'PATCH', url: `/schedules/${s.id}`, headers: auth, payload: { dedupe: false } });
    expect(off.json()).toMatchObject({ dedupe: false });
  });
});
