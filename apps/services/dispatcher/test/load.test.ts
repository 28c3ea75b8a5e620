/**
 * Load: N scheduled targets (10,000 by default) all due in the same minute, dispatched by two
 * replicas ticking at once against the real Postgres and Kafka. Pass: every active target gets
 * exactly one TargetDue and one JobDispatched for that slot (none twice, none missing, job id
 * derived from the slot), every schedule moved on to the next minute, the one-in-1,000 inactive
 * targets had their schedules cancelled with nothing sent, and the whole dispatch took less than
 * TRAWL_LOAD_DISPATCH_MAX_MS (default 60 s). Prints the time and each replica's share.
 *
 * Size: TRAWL_LOAD_TARGETS (default 10,000; see package.json `test:load`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { EventProducer, endOffsets, provisionTopics, TOPICS } from '@trawl/streams';
import { eventsSince, testKafka, testLogger } from '@trawl/streams/testing';
import { CONFIG_MIGRATIONS, createPool, crawlSpec, DEFAULT_QUOTAS, jobIdForSlot, migrate, upsertWebsite } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import type { JobDispatched, TargetDue } from '@trawl/schemas';
import { Dispatcher } from '../src/dispatcher.ts';

const TARGETS = Number(process.env.TRAWL_LOAD_TARGETS ?? 10_000);
const MAX_MS = Number(process.env.TRAWL_LOAD_DISPATCH_MAX_MS ?? 60_000);

const logger = testLogger('dispatcher-load');
const kafka = testKafka('dispatcher-load', logger);
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('trawl_dispatch_load');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await provisionTopics(kafka);
});

afterAll(async () => {
  await db?.drop();
});

describe(`dispatcher under load (${TARGETS} targets due in the same minute)`, () => {
  it(
    'two replicas dispatch every target exactly once for its slot',
    async () => {
      const run = randomBytes(4).toString('hex');
      const owner = `load-${run}`;
      const website = `w-${run}`;
      await upsertWebsite(db.pool, {
        ...crawlSpec(null),
        id: website, owner_id: owner, name: 'Load', base_url: 'http://127.0.0.1:1/',
        next_link_selector: null, page_param: null, item_root: null,
      });
      // One target in 1,000 is inactive: its schedule must be cancelled, nothing dispatched.
      const inactive = Math.floor(TARGETS / 1000);
      const active = TARGETS - inactive;
      // Every schedule is `* * * * *`, due at the start of the current minute; the ticks run with
      // `now` a few seconds later, so exactly that one slot is due for each.
      const slot = new Date(Math.floor(Date.now() / 60_000) * 60_000);
      const now = new Date(slot.getTime() + 5_000);
      const seeded = Date.now();
      await db.pool.query(
        `INSERT INTO targets (id, owner_id, website_id, url_template, keywords, active)
         SELECT 't-' || $1 || '-' || i, $2, $3, 'http://127.0.0.1:1/?q={keywords}', jsonb_build_array('k' || i), i % 1000 <> 0
         FROM generate_series(1, $4::int) AS i`,
        [run, owner, website, TARGETS],
      );
      await db.pool.query(
        `INSERT INTO schedules (id, owner_id, target_id, cron, next_due)
         SELECT 's-' || $1 || '-' || i, $2, 't-' || $1 || '-' || i, '* * * * *', $3::timestamptz
         FROM generate_series(1, $4::int) AS i`,
        [run, owner, slot, TARGETS],
      );
      await db.pool.query('ANALYZE targets; ANALYZE schedules');
      console.log(`[dispatcher load] seeded ${TARGETS} targets + schedules in ${Date.now() - seeded} ms`);

      const replicas = [0, 1].map(() => {
        const pool = createPool({ connectionString: db.url, max: 4, applicationName: 'trawl-dispatcher-load' });
        const producer = new EventProducer({ kafka, logger });
        // One owner holds every schedule: quotas far above the load, so that all of it is dispatched (and counted in the ledger).
        const quotas = { ...DEFAULT_QUOTAS, active_jobs: 1_000_000, pages_per_day: 1_000_000_000 };
        return { pool, producer, dispatcher: new Dispatcher({ pool, producer, logger, quotas }) };
      });
      await Promise.all(replicas.map((r) => r.producer.connect()));
      const before = await endOffsets(kafka, [TOPICS.jobs, TOPICS.schedule]);

      const started = performance.now();
      let results: { dispatched: number; cancelled: number }[];
      try {
        results = await Promise.all(replicas.map((r) => r.dispatcher.tick(now)));
      } finally {
        await Promise.all(replicas.map(async (r) => { await r.producer.disconnect(); await r.pool.end(); }));
      }
      const elapsed = performance.now() - started;
      const dispatched = results.reduce((n, r) => n + r.dispatched, 0);
      console.log(
        `[dispatcher load] ${dispatched} dispatched (+ ${results.reduce((n, r) => n + r.cancelled, 0)} cancelled) in ${(elapsed / 1000).toFixed(2)} s ` +
          `(${Math.round(dispatched / (elapsed / 1000))}/s); replica shares: ${results.map((r) => r.dispatched).join(' + ')}`,
      );

      // Postgres: every schedule moved on to the next minute, remembering this slot's job.
      const { rows } = await db.pool.query<{ moved: number; still_due: number; cancelled: number; no_job: number }>(
        `SELECT count(*) FILTER (WHERE status = 'active' AND next_due = $2::timestamptz + interval '1 minute' AND last_scheduled = $2
                                   AND last_job_id IS NOT NULL)::int AS moved,
                count(*) FILTER (WHERE status = 'active' AND next_due <= $3)::int AS still_due,
                count(*) FILTER (WHERE status = 'cancelled' AND last_job_id IS NULL)::int AS cancelled,
                count(*) FILTER (WHERE status = 'active' AND last_job_id IS NULL)::int AS no_job
         FROM schedules WHERE owner_id = $1`,
        [owner, slot, now],
      );
      expect(rows[0]).toEqual({ moved: active, still_due: 0, cancelled: inactive, no_job: 0 });

      // Kafka: one TargetDue and one JobDispatched per target for this slot.
      const read = performance.now();
      const events = (await eventsSince(kafka, before, [TOPICS.jobs, TOPICS.schedule])).filter(
        (e) => (e.value as { user_id?: string | null }).user_id === owner,
      );
      const due = events.filter((e) => e.name === 'TargetDue').map((e) => e.value as TargetDue);
      const jobs = events.filter((e) => e.name === 'JobDispatched').map((e) => e.value as JobDispatched);
      console.log(`[dispatcher load] read back ${events.length} events in ${Math.round(performance.now() - read)} ms`);
      const perSchedule = (list: { schedule_id: string | null }[]) => {
        const counts = new Map<string, number>();
        for (const e of list) counts.set(e.schedule_id!, (counts.get(e.schedule_id!) ?? 0) + 1);
        return counts;
      };
      const dueCounts = perSchedule(due);
      const jobCounts = perSchedule(jobs);
      const twice = [...jobCounts].filter(([, n]) => n > 1).length + [...dueCounts].filter(([, n]) => n > 1).length;
      const expected = Array.from({ length: TARGETS }, (_, i) => i + 1).filter((i) => i % 1000 !== 0).map((i) => `s-${run}-${i}`);
      const missing = expected.filter((s) => !jobCounts.has(s) || !dueCounts.has(s));
      console.log(`[dispatcher load] TargetDue ${due.length}, JobDispatched ${jobs.length}, duplicated ${twice}, missing ${missing.length}`);
      expect(missing).toEqual([]);
      expect(twice).toBe(0);
      expect(due).toHaveLength(active);
      expect(jobs).toHaveLength(active);
      expect(dispatched).toBe(active);
      expect(results.reduce((n, r) => n + r.cancelled, 0)).toBe(inactive);
      for (const d of due) {
        expect(d.slot_at.getTime()).toBe(slot.getTime());
        expect(d.job_id).toBe(jobIdForSlot(d.schedule_id!, slot));
      }
      expect(new Set(jobs.map((j) => j.job_id)).size).toBe(active);
      expect(elapsed).toBeLessThan(MAX_MS);
    },
    240_000,
  );
});
