import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { samples } from '@trawl/schemas';
import { atLeastOnceLog, consumerOrder, decoded, placeInPartitions, type PlacedRecord } from '@trawl/streams/testing';
import { InMemoryReadModel } from './in-memory-model.ts';
import { firstOccurrences, firstOccurrencesSql, identityOf } from './event-identity.ts';
import { planBatch } from './plan-batch.ts';
import type { ProjectableEvent } from './projectable-event.ts';

/** Generated logs per property (TRAWL_PROPERTY_RUNS raises it for a longer search). */
const RUNS = Number(process.env.TRAWL_PROPERTY_RUNS ?? 300);

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const empty = { jobs: new Map(), loggedEventIds: new Set<string>(), pages: new Map(), items: new Set<string>() };

function model(events: readonly ProjectableEvent[], sizes: readonly number[] = [events.length]): InMemoryReadModel {
  const m = new InMemoryReadModel();
  for (let i = 0, b = 0; i < events.length; b++) {
    const n = Math.max(1, sizes[b % sizes.length]!);
    m.apply(events.slice(i, i + n));
    i += n;
  }
  return m;
}

const withoutSeq = (m: InMemoryReadModel) => ({
  jobs: [...m.jobs.values()].sort((a, b) => a.job_id.localeCompare(b.job_id)),
  pages: [...m.pages.values()].sort((a, b) => (a.job_id + a.fetch_id).localeCompare(b.job_id + b.fetch_id)),
  items: [...m.items.values()].sort((a, b) => (a.job_id + a.item_key).localeCompare(b.job_id + b.item_key)),
  log: m.log.map(({ seq: _seq, ...rest }) => rest).sort((a, b) => a.event_id.localeCompare(b.event_id)),
  cache: [...m.cache.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
});

const event = (r: PlacedRecord): ProjectableEvent => decoded(r.event);

/** The reference, written without the planner's identity code: the first record of each event id in production order. */
function firstById(log: readonly PlacedRecord[]): PlacedRecord[] {
  const seen = new Set<string>();
  return log.filter((r) => !seen.has(r.event.eventId) && !!seen.add(r.event.eventId));
}

describe('event identity', () => {
  it(`keeps the first copy of each event in log order and lets later copies change nothing, however partitions interleave and batches fall (${RUNS} generated logs)`, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer(),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 4 }),
        (seed, order, sizes, partitions) => {
          const log = placeInPartitions(atLeastOnceLog({ seed }), partitions);
          const live = model(consumerOrder(log, order).map(event), sizes);
          const reference = model(firstById(log).map(event));
          expect(withoutSeq(live)).toEqual(withoutSeq(reference));
          // Each job's log numbered 1..n whatever the batching.
          for (const job of live.jobs.values()) expect(live.log.filter((l) => l.job_id === job.job_id).map((l) => l.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: job.log_seq }, (_, i) => i + 1));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('generates logs that hold what the property is about: copies, two-id fetches, every end', () => {
    const logs = Array.from({ length: 50 }, (_, i) => atLeastOnceLog({ seed: i + 1 }));
    const records = logs.flat();
    expect(records.filter((r) => r.copy).length).toBeGreaterThan(100);
    const copies = records.filter((r) => r.copy);
    expect(new Set(copies.map((r) => r.event.name))).toEqual(new Set(['CrawlRequested', 'JobDispatched', 'PageFetched', 'PageFailed', 'ItemExtracted', 'JobCompleted', 'JobFailed', 'JobCancelled']));
    // Copies later and earlier than their original (a skewed clock), and with other figures.
    const original = new Map(records.filter((r) => !r.copy).map((r) => [r.event.eventId, r.event]));
    expect(copies.some((c) => c.event.occurredAt > original.get(c.event.eventId)!.occurredAt)).toBe(true);
    expect(copies.some((c) => c.event.occurredAt < original.get(c.event.eventId)!.occurredAt)).toBe(true);
    expect(copies.some((c) => c.event.name === 'PageFetched' && JSON.stringify(c.event.body) !== JSON.stringify(original.get(c.event.eventId)!.body))).toBe(true);
    const ends = new Set(records.filter((r) => !r.copy).map((r) => r.event.name).filter((n) => n.startsWith('Job') && n !== 'JobDispatched'));
    expect(ends).toEqual(new Set(['JobCompleted', 'JobFailed', 'JobCancelled']));
  });

  it('keeps the first copy in log order even when a copy carries an earlier time (a skewed clock)', () => {
    const first: ProjectableEvent = { name: 'PageFetched', value: { ...samples.PageFetched, event_id: 'p1', occurred_at: t(10), bytes: 100 } };
    const copy: ProjectableEvent = { name: 'PageFetched', value: { ...samples.PageFetched, event_id: 'p1', occurred_at: t(5), bytes: 999 } };
    const plan = planBatch(empty, [first, copy]);
    expect(plan.pages.map((p) => ({ bytes: p.bytes, fetched_at: p.fetched_at }))).toEqual([{ bytes: 100, fetched_at: t(10) }]);
    expect(plan.jobs[0]).toMatchObject({ bytes: 100, first_page_at: t(10), updated_at: t(10) });
    expect(plan).toMatchObject({ applied: 1, duplicates: 1 });
    expect(plan.log).toHaveLength(1);
  });

  it('names items by job and key, every other event by its id', () => {
    const item: ProjectableEvent = { name: 'ItemExtracted', value: { ...samples.ItemExtracted, event_id: 'x' } };
    const again: ProjectableEvent = { name: 'ItemExtracted', value: { ...samples.ItemExtracted, event_id: 'y' } };
    expect(identityOf(item)).toBe(identityOf(again));
    expect(identityOf({ name: 'PageFetched', value: samples.PageFetched })).toBe(samples.PageFetched.event_id);
    const known = new Set([samples.PageFetched.event_id]);
    expect(firstOccurrences([item, again, { name: 'PageFetched', value: samples.PageFetched }], (_e, id) => known.has(id))).toEqual({ first: [item], copies: 2 });
  });

  it('writes the same rule in SQL: per identity, the lowest log position', () => {
    expect(firstOccurrencesSql('"s"', ['job_id', 'item_key'], 'a, b')).toBe(
      'SELECT DISTINCT ON ("job_id" COLLATE "C", "item_key" COLLATE "C") a, b FROM "s" ORDER BY "job_id" COLLATE "C", "item_key" COLLATE "C", "log_partition", "log_offset"',
    );
  });
});
