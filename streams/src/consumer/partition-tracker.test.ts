import { describe, expect, it } from 'vitest';
import { PartitionTracker, type TrackedEntry } from './partition-tracker.ts';

function tracker(opts: Partial<{ concurrency: number; keyOrdering: boolean; startOffset: bigint }> = {}) {
  return new PartitionTracker<string>({ concurrency: 2, keyOrdering: false, startOffset: 10n, ...opts });
}

function startAll<T>(t: PartitionTracker<T>): TrackedEntry<T>[] {
  const out: TrackedEntry<T>[] = [];
  for (let e = t.takeStartable(); e; e = t.takeStartable()) out.push(e);
  return out;
}

describe('PartitionTracker', () => {
  it('commits nothing before anything is finished', () => {
    const t = tracker();
    t.accept(10n, 'a', 'm10');
    t.accept(11n, 'b', 'm11');
    expect(t.lowestUnfinished()).toBe(10n);
    expect(t.commitCandidate()).toBeUndefined();
  });

  it('limits concurrency within the partition', () => {
    const t = tracker({ concurrency: 2 });
    for (let o = 10n; o < 15n; o++) t.accept(o, `k${o}`, `m${o}`);
    expect(startAll(t).map((e) => e.offset)).toEqual([10n, 11n]);
    expect(t.running).toBe(2);
    expect(t.queued).toBe(3);
  });

  it('commits only up to the lowest unfinished message when later ones finish first', () => {
    const t = tracker({ concurrency: 3 });
    for (let o = 10n; o < 13n; o++) t.accept(o, null, `m${o}`);
    const [a, b, c] = startAll(t);
    t.complete(c!);
    t.complete(b!);
    expect(t.commitCandidate()).toBeUndefined();
    t.complete(a!);
    expect(t.lowestUnfinished()).toBe(13n);
    expect(t.commitCandidate()).toBe(13n);
    t.markCommitted(13n);
    expect(t.commitCandidate()).toBeUndefined();
    expect(t.window()).toBe(0n);
  });

  it('never runs two messages with the same key at once under keyOrdering, and keeps their order', () => {
    const t = tracker({ concurrency: 10, keyOrdering: true });
    t.accept(10n, 'host-a', 'a1');
    t.accept(11n, 'host-a', 'a2');
    t.accept(12n, 'host-b', 'b1');
    t.accept(13n, 'host-a', 'a3');
    const first = startAll(t);
    expect(first.map((e) => e.payload)).toEqual(['a1', 'b1']);
    t.complete(first[0]!);
    const second = startAll(t);
    expect(second.map((e) => e.payload)).toEqual(['a2']);
    t.complete(second[0]!);
    expect(startAll(t).map((e) => e.payload)).toEqual(['a3']);
  });

  it('runs same-key messages concurrently without keyOrdering', () => {
    const t = tracker({ concurrency: 10, keyOrdering: false });
    t.accept(10n, 'host-a', 'a1');
    t.accept(11n, 'host-a', 'a2');
    expect(startAll(t)).toHaveLength(2);
  });

  it('skips offset gaps (compaction, transaction markers) when committing', () => {
    const t = tracker({ concurrency: 5 });
    t.accept(10n, null, 'x');
    t.accept(14n, null, 'y');
    t.advanceTo(17n);
    const [x, y] = startAll(t);
    t.complete(x!);
    expect(t.commitCandidate()).toBe(14n);
    t.complete(y!);
    expect(t.commitCandidate()).toBe(17n);
  });

  it('measures the window from the last commit to the next fetch offset', () => {
    const t = tracker({ concurrency: 5, startOffset: 100n });
    for (let o = 100n; o < 110n; o++) t.accept(o, null, 'm');
    expect(t.window()).toBe(10n);
    for (const e of startAll(t)) t.complete(e);
    t.markCommitted(t.commitCandidate()!);
    expect(t.window()).toBe(5n);
  });

  it('refuses offsets it already has', () => {
    const t = tracker();
    t.accept(10n, null, 'm');
    expect(() => t.accept(10n, null, 'again')).toThrow(RangeError);
  });

  it('keeps dropped messages unfinished so no commit passes them', () => {
    const t = tracker({ concurrency: 1 });
    for (let o = 10n; o < 13n; o++) t.accept(o, null, `m${o}`);
    const [a] = startAll(t);
    expect(t.dropQueued()).toBe(2);
    t.complete(a!);
    expect(t.commitCandidate()).toBe(11n);
    expect(t.takeStartable()).toBeUndefined();
    expect(t.unfinished).toBe(2);
  });

  it('stays correct across compaction of long runs', () => {
    const t = tracker({ concurrency: 50, startOffset: 0n });
    let next = 0n;
    for (let round = 0; round < 100; round++) {
      for (let i = 0; i < 50; i++) t.accept(next++, null, 'm');
      const started = startAll(t);
      for (const e of started.reverse()) t.complete(e);
    }
    expect(t.lowestUnfinished()).toBe(5000n);
    expect(t.unfinished).toBe(0);
  });
});
