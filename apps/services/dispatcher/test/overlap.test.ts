/**
 * Overlap policies against the real Postgres (with projector-pg's read model) and Kafka: while a
 * schedule's previous job is pending, running or paused in `jobs`, or not in `jobs` yet (its
 * JobDispatched not projected), `skip` dispatches nothing and records each slot as skipped, `queue`
 * holds the slot (next_due stays) and runs it once the job ends, `allow` dispatches anyway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { EventProducer, provisionTopics } from '@trawl/streams';
import { testKafka } from '@trawl/streams/testing';
import { CONFIG_MIGRATIONS, createSchedule, DEFAULT_QUOTAS, getSchedule, migrate, NOT_PROJECTED, type OverlapPolicy } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { setupReadModels } from '@trawl/projector-pg';
import { Dispatcher } from '../src/dispatcher.ts';

const logger = pino({ level: 'silent' });
const kafka = testKafka('dispatcher-overlap');
let db: TestDatabase;
let producer: EventProducer;
let dispatcher: Dispatcher;

beforeAll(async () => {
  db = await createTestDatabase('trawl_dispatch_overlap');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await setupReadModels(db.pool);
  await provisionTopics(kafka);
  producer = new EventProducer({ kafka, logger });
  await producer.connect();
  // Slots a minute apart, ticked on a simulated clock; the quotas are not what is tested here.
  dispatcher = new Dispatcher({ pool: db.pool, producer, logger, quotas: { ...DEFAULT_QUOTAS, active_jobs: 1_000, pages_per_day: 10_000_000 } });
});
afterAll(async () => {
  await producer?.disconnect();
  await db?.drop();
});

const T0 = Date.parse('2031-01-01T00:00:00Z');
const minute = (n: number) => new Date(T0 + n * 60_000);

/** A schedule every minute from T0, of its own user. */
async function schedule(overlap: OverlapPolicy) {
  const s = await createSchedule(
    db.pool,
    { id: `s-${randomUUID()}`, owner_id: `u-${randomUUID()}`, overlap, request: { spider: null, start_urls: ['http://127.0.0.1:1/'], depth: 0, max_pages: 5, params: {} }, cadence: { cron: '* * * * *' } },
    minute(-1),
  );
  expect(s.next_due).toEqual(minute(0));
  return s.id;
}

/** What projector-pg would write on seeing a job: its row in `jobs` with a status. */
async function project(jobId: string, scheduleId: string, status: string) {
  await db.pool.query(
    `INSERT INTO jobs (job_id, schedule_id, status, updated_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (job_id) DO UPDATE SET status = EXCLUDED.status, updated_at = now()`,
    [jobId, scheduleId, status],
  );
}

/** Ticks at `at` and returns what happened to this schedule: the job it started, or none. */
async function tick(id: string, at: Date) {
  const before = await getSchedule(db.pool, id);
  await dispatcher.tick(at);
  const after = (await getSchedule(db.pool, id))!;
  return { started: after.last_job_id !== before!.last_job_id ? after.last_job_id : null, after };
}

describe('overlap policy', () => {
  it('skip: never dispatches while the previous job is pending or running, and says why', async () => {
    const id = await schedule('skip');
    const first = await tick(id, minute(0));
    expect(first.started).not.toBeNull();
    const jobId = first.started!;
    for (const [i, status] of [[1, 'pending'], [2, 'running'], [3, 'running'], [4, 'paused']] as const) {
      await project(jobId, id, status);
      const r = await tick(id, minute(i));
      expect(r.started).toBeNull();
      expect(r.after.skipped_at).toEqual(minute(i));
      expect(r.after.skipped_reason).toBe(`OVERLAP: the previous job ${jobId} is still ${status}`);
      expect(r.after.next_due).toEqual(minute(i + 1));
    }
    await project(jobId, id, 'finished');
    const next = await tick(id, minute(5));
    expect(next.started).not.toBeNull();
    expect(next.after.last_scheduled).toEqual(minute(5));
  });

  it('a previous job the read model does not show yet (projector-pg behind) holds the slot too', async () => {
    const skip = await schedule('skip');
    const jobId = (await tick(skip, minute(0))).started!;
    // Its JobDispatched is not projected: no row in jobs.
    const r = await tick(skip, minute(1));
    expect(r.started).toBeNull();
    expect(r.after.skipped_reason).toBe(`OVERLAP: the previous job ${jobId} is still ${NOT_PROJECTED}`);
    expect(r.after.next_due).toEqual(minute(2));
    await project(jobId, skip, 'running');
    expect((await tick(skip, minute(2))).started).toBeNull();
    await project(jobId, skip, 'finished');
    expect((await tick(skip, minute(3))).started).not.toBeNull();

    const queue = await schedule('queue');
    const queued = (await tick(queue, minute(0))).started!;
    const held = await tick(queue, minute(1));
    expect(held.started).toBeNull();
    expect(held.after.next_due).toEqual(minute(1));
    await project(queued, queue, 'cancelled');
    expect((await tick(queue, minute(1.5))).started).not.toBeNull();
  });

  it('queue: holds the slot until the previous job ends, then runs the latest slot once', async () => {
    const id = await schedule('queue');
    const jobId = (await tick(id, minute(0))).started!;
    await project(jobId, id, 'running');
    for (const i of [1, 2, 3]) {
      const r = await tick(id, minute(i));
      expect(r.started).toBeNull();
      expect(r.after.next_due).toEqual(minute(1));
      expect(r.after.skipped_reason).toBeNull();
    }
    await project(jobId, id, 'failed');
    const r = await tick(id, minute(3.5));
    expect(r.started).not.toBeNull();
    expect(r.after.last_scheduled).toEqual(minute(3));
    expect(r.after.next_due).toEqual(minute(4));
  });

  it('allow: dispatches every slot whatever the previous job does', async () => {
    const id = await schedule('allow');
    const jobId = (await tick(id, minute(0))).started!;
    await project(jobId, id, 'running');
    const r = await tick(id, minute(1));
    expect(r.started).not.toBeNull();
    expect(r.started).not.toBe(jobId);
  });

  it('schedules held back are not claimed again in the same tick: the ones behind them still run', async () => {
    const small = new Dispatcher({ pool: db.pool, producer, logger, batchSize: 2, quotas: { ...DEFAULT_QUOTAS, active_jobs: 1_000, pages_per_day: 10_000_000 } });
    const held = [await schedule('queue'), await schedule('queue'), await schedule('queue')];
    await small.tick(minute(0));
    for (const id of held) await project((await getSchedule(db.pool, id))!.last_job_id!, id, 'running');
    // Due after the held ones, so every batch of two meets held schedules first.
    const free = await schedule('skip');
    await db.pool.query('UPDATE schedules SET next_due = $2 WHERE id = $1', [free, new Date(minute(1).getTime() + 1_000)]);
    const r = await small.tick(minute(1.5));
    expect(r.queued).toBe(3);
    expect((await getSchedule(db.pool, free))!.last_scheduled).toEqual(new Date(minute(1).getTime() + 1_000));
    for (const id of held) expect((await getSchedule(db.pool, id))!.next_due).toEqual(minute(1));
  });
});
