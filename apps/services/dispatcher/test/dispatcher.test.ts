/**
 * Invariant 5: a due schedule slot dispatches exactly one job, also with several dispatcher
 * replicas. Two dispatchers (own pools, own producers) tick concurrently against the real
 * Postgres and Kafka; the test then reads trawl.jobs and counts jobs per slot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createKafka, createLogger, EventCodec, EventProducer, provisionTopics, readEvents, TOPICS } from '@trawl/streams';
import { CONFIG_MIGRATIONS, createPool, createSchedule, DEFAULT_QUOTAS, getSchedule, migrate, upsertTarget, upsertWebsite, crawlSpec } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import type { JobDispatched, TargetDue } from '@trawl/schemas';
import { Dispatcher } from '../src/dispatcher.ts';

const logger = createLogger('dispatcher-test');
const kafka = createKafka({ clientId: 'dispatcher-test', logger });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await provisionTopics(kafka);
});

afterAll(async () => {
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('dispatcher', () => {
  it('dispatches one job per slot with two replicas ticking at once', async () => {
    const id = randomUUID();
    const spec = crawlSpec(null);
    await upsertWebsite(db.pool, {
      ...spec,
      id: `w-${id}`,
      owner_id: 'alice',
      name: 'Example',
      base_url: 'http://127.0.0.1:1/',
      next_link_selector: null,
      page_param: null,
      item_root: null,
      host_concurrency: 2,
      host_delay_ms: 0,
      max_depth: 1,
      max_pages: 10,
    });
    await upsertTarget(db.pool, { id: `t-${id}`, owner_id: 'alice', website_id: `w-${id}`, name: null, url_template: 'http://127.0.0.1:1/?q={keywords}', keywords: ['x'], location: null, active: true });
    const schedule = await createSchedule(db.pool, { id: `s-${id}`, owner_id: 'alice', target_id: `t-${id}`, cadence: { cron: '*/2 * * * * *' } });

    const replicas = [0, 1].map(() => {
      const pool = createPool({ connectionString: db.url, max: 2 });
      const producer = new EventProducer({ kafka, logger });
      // A schedule every 2 s is below the default minimum interval; this test is about replicas.
      return { pool, producer, dispatcher: new Dispatcher({ pool, producer, logger, quotas: { ...DEFAULT_QUOTAS, min_interval_seconds: 0 } }) };
    });
    await Promise.all(replicas.map((r) => r.producer.connect()));
    // Both replicas tick on the wall clock until three slots went out between them (a slow tick
    // merges missed slots into one, so a fixed window could see fewer). Each replica counts into
    // its own slot: `total += await r.dispatcher.tick()` would read `total` before the await, and
    // a replica whose tick overlapped the other's would write back a stale sum.
    const deadline = Date.now() + 40_000;
    const counts = replicas.map(() => 0);
    const total = () => counts.reduce((a, b) => a + b, 0);
    await Promise.all(
      replicas.map(async (r, i) => {
        while (total() < 3 && Date.now() < deadline) {
          const { dispatched } = await r.dispatcher.tick();
          counts[i] = counts[i]! + dispatched;
          await sleep(100);
        }
      }),
    );
    await Promise.all(replicas.map(async (r) => { await r.producer.disconnect(); await r.pool.end(); }));

    const events = (await readEvents(kafka, new EventCodec(), [TOPICS.jobs, TOPICS.schedule])).filter(
      (e) => (e.event.value as { schedule_id?: string | null }).schedule_id === schedule.id,
    );
    const dispatched = events.filter((e) => e.event.name === 'JobDispatched').map((e) => e.event.value as JobDispatched);
    const due = events.filter((e) => e.event.name === 'TargetDue').map((e) => e.event.value as TargetDue);
    const slots = due.map((d) => d.slot_at.toISOString());

    expect(dispatched.length).toBeGreaterThanOrEqual(3);
    expect(dispatched.length).toBe(total());
    expect(new Set(slots).size).toBe(slots.length);
    expect(new Set(dispatched.map((d) => d.job_id)).size).toBe(dispatched.length);
    expect(dispatched.length).toBe(due.length);
    for (const d of dispatched) expect(d.search_url).toBe('http://127.0.0.1:1/?q=x');
    const after = await getSchedule(db.pool, schedule.id);
    const latest = due.reduce((a, b) => (a.slot_at > b.slot_at ? a : b));
    expect(after!.last_job_id).toBe(latest.job_id);
  }, 60_000);
});
