/**
 * What the dispatcher checks where a schedule fires, against the real Postgres and Kafka: a
 * website that is gone or now another user's pauses the schedule with its reason (in the row the
 * API shows, and in the log) and dispatches nothing; so does a cadence below the owner's minimum
 * interval; a slot past the owner's active-jobs quota is skipped with its reason; a job that fits
 * only partly in the day's pages starts with what is left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { EventProducer, endOffsets, provisionTopics, TOPICS } from '@trawl/streams';
import { eventsSince, testKafka } from '@trawl/streams/testing';
import {
  CONFIG_MIGRATIONS,
  crawlSpec,
  createSchedule,
  DEFAULT_QUOTAS,
  deleteWebsite,
  getSchedule,
  migrate,
  upsertWebsite,
  type QuotaLimits,
} from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import type { JobDispatched } from '@trawl/schemas';
import { Dispatcher } from '../src/dispatcher.ts';

const lines: Record<string, unknown>[] = [];
const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => void (lines.push(JSON.parse(String(chunk))), done()) }));
const kafka = testKafka('dispatcher-checks');
let db: TestDatabase;
let producer: EventProducer;

beforeAll(async () => {
  db = await createTestDatabase('trawl_dispatch_checks');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await provisionTopics(kafka);
  producer = new EventProducer({ kafka, logger: pino({ level: 'silent' }) });
  await producer.connect();
});
afterAll(async () => {
  await producer?.disconnect();
  await db?.drop();
});

function website(id: string, owner: string | null) {
  return upsertWebsite(db.pool, { ...crawlSpec(null), id, owner_id: owner, name: id, base_url: 'http://127.0.0.1:1/', next_link_selector: null, page_param: null, item_root: null, max_pages: 500 });
}

/** A schedule of `owner` crawling with `spider`, due now. */
async function schedule(owner: string, spider: string | null, cadence: { cron?: string; intervalMs?: number } = { cron: '0 * * * *' }) {
  const s = await createSchedule(db.pool, {
    id: `s-${randomUUID()}`,
    owner_id: owner,
    request: { spider, start_urls: ['http://127.0.0.1:1/start'], depth: 1, max_pages: null, params: {} },
    cadence,
  });
  await db.pool.query("UPDATE schedules SET next_due = now() - interval '1 second' WHERE id = $1", [s.id]);
  return s.id;
}

async function tick(quotas: QuotaLimits = DEFAULT_QUOTAS): Promise<{ dispatched: JobDispatched[] }> {
  const before = await endOffsets(kafka, [TOPICS.jobs]);
  await new Dispatcher({ pool: db.pool, producer, logger, quotas }).tick();
  const events = await eventsSince(kafka, before, [TOPICS.jobs]);
  return { dispatched: events.filter((e) => e.name === 'JobDispatched').map((e) => e.value as JobDispatched) };
}

describe('checks where a schedule fires', () => {
  it("pauses WEBSITE_NOT_OWNED when its website was deleted and re-created by another user, and never runs that user's spec", async () => {
    const alice = `alice-${randomUUID()}`;
    const site = `shop-${randomUUID()}`;
    await website(site, alice);
    const id = await schedule(alice, site);
    // Alice deletes her website; Mallory creates one with the same id.
    expect(await deleteWebsite(db.pool, site, alice)).toBe(true);
    await website(site, 'mallory');

    const { dispatched } = await tick();
    expect(dispatched.filter((d) => d.schedule_id === id)).toEqual([]);
    const after = await getSchedule(db.pool, id);
    expect(after).toMatchObject({ status: 'paused', paused_reason: 'WEBSITE_NOT_OWNED', paused_message: expect.stringContaining(site), paused_at: expect.any(Date) });
    expect(lines.find((l) => l.schedule_id === id)).toMatchObject({ level: 40, reason: 'WEBSITE_NOT_OWNED', owner_id: alice, website_id: site });
  });

  it('pauses WEBSITE_GONE when its website no longer exists', async () => {
    const bob = `bob-${randomUUID()}`;
    const site = `gone-${randomUUID()}`;
    await website(site, bob);
    const id = await schedule(bob, site);
    await deleteWebsite(db.pool, site, bob);
    const { dispatched } = await tick();
    expect(dispatched.filter((d) => d.schedule_id === id)).toEqual([]);
    expect(await getSchedule(db.pool, id)).toMatchObject({ status: 'paused', paused_reason: 'WEBSITE_GONE' });
  });

  it('pauses INTERVAL_TOO_SHORT a schedule running every second (made before the quota existed)', async () => {
    const carol = `carol-${randomUUID()}`;
    const id = await schedule(carol, null, { intervalMs: 1_000 });
    const { dispatched } = await tick();
    expect(dispatched.filter((d) => d.schedule_id === id)).toEqual([]);
    expect(await getSchedule(db.pool, id)).toMatchObject({ status: 'paused', paused_reason: 'INTERVAL_TOO_SHORT', paused_message: expect.stringContaining('min_interval_seconds') });
  });

  it("skips a slot past its owner's active-jobs quota, and caps a job to the day's pages left", async () => {
    const dave = `dave-${randomUUID()}`;
    const site = `d-${randomUUID()}`;
    await website(site, dave);
    const ids = [await schedule(dave, site), await schedule(dave, site), await schedule(dave, site)];
    const quotas = { ...DEFAULT_QUOTAS, active_jobs: 2, pages_per_day: 700 };
    const { dispatched } = await tick(quotas);
    const mine = dispatched.filter((d) => ids.includes(d.schedule_id!));
    // 500 pages, then the 200 left of the day; the third slot is skipped.
    expect(mine.map((d) => d.spec.max_pages).sort()).toEqual([200, 500]);
    const rows = await Promise.all(ids.map((id) => getSchedule(db.pool, id)));
    const skipped = rows.filter((r) => r!.skipped_reason);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ status: 'active', skipped_reason: expect.stringMatching(/^QUOTA_EXCEEDED: quota active_jobs \(2\)/), skipped_at: expect.any(Date) });
    // The skipped schedule moved on to its next slot.
    expect(skipped[0]!.next_due!.getTime()).toBeGreaterThan(Date.now());
    const { rows: ledger } = await db.pool.query('SELECT job_id, max_pages FROM job_quota_ledger WHERE user_id = $1 ORDER BY max_pages', [dave]);
    expect(ledger.map((r) => r.max_pages)).toEqual([200, 500]);
    expect(ledger.map((r) => r.job_id).sort()).toEqual(mine.map((d) => d.job_id).sort());
  });
});
