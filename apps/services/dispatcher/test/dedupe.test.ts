/**
 * Dedupe where the API's entries are not: a dispatcher database without `crawl_dedupe` (the API's
 * migrations not run on it) runs the slots of a schedule with `dedupe` as any other's, and so does a
 * dedupe TTL of 0. What dedupe does with the entries is tested with the API that owns them
 * (apps/services/api/test/schedule-dedupe.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { EventProducer, provisionTopics } from '@trawl/streams';
import { testKafka } from '@trawl/streams/testing';
import { CONFIG_MIGRATIONS, createSchedule, DEFAULT_QUOTAS, getSchedule, jobIdForSlot, migrate } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { Dispatcher } from '../src/dispatcher.ts';

const logger = pino({ level: 'silent' });
const kafka = testKafka('dispatcher-dedupe');
const quotas = { ...DEFAULT_QUOTAS, active_jobs: 1_000, pages_per_day: 10_000_000 };
let db: TestDatabase;
let producer: EventProducer;

beforeAll(async () => {
  db = await createTestDatabase('trawl_dispatch_dedupe');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await provisionTopics(kafka);
  producer = new EventProducer({ kafka, logger });
  await producer.connect();
});
afterAll(async () => {
  await producer?.disconnect();
  await db?.drop();
});

const T0 = Date.parse('2031-01-01T00:00:00Z');
const minute = (n: number) => new Date(T0 + n * 60_000);

describe('dedupe without the dedupe entries', () => {
  it('runs every slot of a schedule with dedupe, whatever the TTL', async () => {
    for (const dedupeTtlSeconds of [3_600, 0]) {
      const dispatcher = new Dispatcher({ pool: db.pool, producer, logger, quotas, dedupeTtlSeconds });
      const request = { spider: null, start_urls: ['http://127.0.0.1:1/'], depth: 0, max_pages: 5, params: {} };
      const ids = [`s-${randomUUID()}`, `s-${randomUUID()}`];
      for (const id of ids) await createSchedule(db.pool, { id, owner_id: 'u', request, dedupe: true, overlap: 'allow', cadence: { cron: '* * * * *' } }, minute(-1));
      for (const n of [0, 1]) {
        const r = await dispatcher.tick(minute(n));
        expect(r).toMatchObject({ dispatched: 2, skipped: 0 });
        for (const id of ids) expect((await getSchedule(db.pool, id))!.last_job_id).toBe(jobIdForSlot(id, minute(n)));
      }
      await db.pool.query("UPDATE schedules SET status = 'cancelled' WHERE id = ANY($1::text[])", [ids]);
    }
  });
});
