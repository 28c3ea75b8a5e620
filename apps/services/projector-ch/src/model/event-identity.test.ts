import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { atLeastOnceLog, consumerOrder, decoded, placeInPartitions, type PlacedRecord } from '@trawl/streams/testing';
import { EventIdMemory } from '../projector/event-id-memory.ts';
import { firstCopies } from './event-identity.ts';
import type { PositionedEvent } from './fact-rows.ts';
import { expectedFacts, factKey as key } from '../../test/support/oracle.ts';

/** Generated logs per property (TRAWL_PROPERTY_RUNS raises it for a longer search). */
const RUNS = Number(process.env.TRAWL_PROPERTY_RUNS ?? 300);

const positioned = (r: PlacedRecord): PositionedEvent => ({ ...decoded(r.event), topic: r.topic, partition: r.partition, offset: r.offset });

/** Cuts a list into batches of the given sizes, in turn. */
function batches<T>(xs: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  for (let i = 0, b = 0; i < xs.length; b++) {
    const n = Math.max(1, sizes[b % sizes.length]!);
    out.push(xs.slice(i, i + n));
    i += n;
  }
  return out;
}

/** The live projector's check, with the stored rows in memory: per table, the rows a range read of [lowest − window, highest] returns. */
function live(events: readonly PositionedEvent[], sizes: readonly number[], window: bigint): Set<string> {
  const stored: PositionedEvent[] = [];
  for (const batch of batches(events, sizes)) {
    for (const topic of ['jobs', 'pages', 'items']) {
      const list = batch.filter((e) => e.topic === topic);
      if (list.length === 0) continue;
      const lo = new Map<number, bigint>();
      const hi = new Map<number, bigint>();
      for (const e of list) {
        if (!lo.has(e.partition) || e.offset < lo.get(e.partition)!) lo.set(e.partition, e.offset);
        if (!hi.has(e.partition) || e.offset > hi.get(e.partition)!) hi.set(e.partition, e.offset);
      }
      const rows = stored.filter((s) => s.topic === topic && lo.has(s.partition) && s.offset >= lo.get(s.partition)! - window && s.offset <= hi.get(s.partition)!);
      const keptAt = (p: number, id: string) => rows.filter((s) => s.partition === p && s.value.event_id === id).reduce<bigint | undefined>((m, s) => (m === undefined || s.offset > m ? s.offset : m), undefined);
      stored.push(...firstCopies(list, keptAt, window));
    }
  }
  return new Set(stored.map((e) => key(e.topic, e.partition, e.offset)));
}

/** The replay's check: one memory per table, chunk by chunk. */
function replay(events: readonly PositionedEvent[], sizes: readonly number[], window: bigint): Set<string> {
  const memories = new Map(['jobs', 'pages', 'items'].map((t) => [t, new EventIdMemory(window)]));
  const out = new Set<string>();
  for (const batch of batches(events, sizes)) {
    for (const [topic, memory] of memories) {
      const list = batch.filter((e) => e.topic === topic);
      if (list.length === 0) continue;
      for (const e of firstCopies(list, memory.keptAt(list), window)) {
        memory.add(e.partition, e.offset, e.value.event_id);
        out.add(key(e.topic, e.partition, e.offset));
      }
    }
  }
  return out;
}

describe('event identity in the analytics', () => {
  it(`keeps the same first copies live and in a replay, however batched, and as the reference says (${RUNS} generated logs, windows from 0 to 40 and the default)`, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 3 }),
        fc.tuple(fc.integer(), fc.integer()),
        fc.tuple(fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 })),
        fc.oneof(fc.bigInt({ min: 0n, max: 40n }), fc.constant(100_000n)),
        (seed, partitions, orders, sizes, window) => {
          const log = placeInPartitions(atLeastOnceLog({ seed, copyRate: 0.4, pauses: true }), partitions);
          const expected = expectedFacts(log.map((r) => ({ topic: r.topic, partition: r.partition, offset: r.offset, event_id: r.event.eventId })), window);
          expect(live(consumerOrder(log, orders[0]).map(positioned), sizes[0], window)).toEqual(expected);
          expect(replay(consumerOrder(log, orders[1]).map(positioned), sizes[1], window)).toEqual(expected);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('measures the window from each event, so batching never changes the answer', () => {
    const e = (offset: number, id = 'x'): PositionedEvent => ({ topic: 'pages', partition: 0, offset: BigInt(offset), name: 'PageFetched', value: { event_id: id } as never });
    // Window 10: a copy 10 offsets after a kept one is left out, 11 after is kept (and keeps the next 10 out).
    expect(firstCopies([e(0), e(10), e(21), e(30), e(32)], () => undefined, 10n).map((x) => x.offset)).toEqual([0n, 21n, 32n]);
    // The same with the first copy stored before the batch.
    expect(firstCopies([e(10), e(21)], () => 0n, 10n).map((x) => x.offset)).toEqual([21n]);
    expect(firstCopies([e(11)], () => 0n, 10n).map((x) => x.offset)).toEqual([11n]);
  });
});
