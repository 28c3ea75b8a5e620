/**
 * The partitions a consumer currently owns, each with its tracker: taking one on at its first
 * batch, giving one up when the group moves it (its queued messages dropped, its running
 * handlers signalled, nothing of it committed again), and what their commits and gauges are.
 */
import { setMaxListeners } from 'node:events';
import { PartitionTracker, type TrackedEntry } from './partition-tracker.ts';
import { tpKey } from './pause-control.ts';
import type { CommitTarget } from './offset-committer.ts';
import type { PartitionSnapshot } from '../metrics/consumer-metrics.ts';
import type { RereadWindow } from './message-processor.ts';

export interface PartitionState<T> {
  readonly key: string;
  readonly topic: string;
  readonly partition: number;
  readonly tracker: PartitionTracker<T>;
  /** Aborted when the partition is given up: handlers see it as `event.signal`. */
  readonly abort: AbortController;
  highWatermark: bigint | undefined;
  /** Offsets below this one (from where the partition was taken on) are re-reads: see RereadWindow. */
  rereadEnd: bigint;
  reread: RereadWindow | undefined;
}

export class OwnedPartitions<T> {
  private readonly states = new Map<string, PartitionState<T>>();

  constructor(private readonly tracking: { readonly concurrency: number; readonly keyOrdering: boolean }) {}

  get(topic: string, partition: number): PartitionState<T> | undefined {
    return this.states.get(tpKey(topic, partition));
  }

  /** Whether `state` is still the live state of its partition (not given up meanwhile). */
  isCurrent(state: PartitionState<T>): boolean {
    return this.states.get(state.key) === state;
  }

  values(): IterableIterator<PartitionState<T>> {
    return this.states.values();
  }

  /** Starts tracking a partition at the offset its first fetch started from. */
  adopt(topic: string, partition: number, startOffset: bigint): PartitionState<T> {
    const abort = new AbortController();
    // Every running handler of the partition may listen to it (concurrency: 64 by default).
    setMaxListeners(0, abort.signal);
    const state: PartitionState<T> = {
      key: tpKey(topic, partition),
      topic,
      partition,
      tracker: new PartitionTracker<T>({ ...this.tracking, startOffset }),
      abort,
      highWatermark: undefined,
      rereadEnd: startOffset,
      reread: undefined,
    };
    this.states.set(state.key, state);
    return state;
  }

  /** Gives a partition up; returns how many accepted messages it left unfinished. */
  abandon(state: PartitionState<T>): number {
    const unfinished = state.tracker.unfinished;
    state.tracker.dropQueued();
    state.abort.abort();
    this.states.delete(state.key);
    return unfinished;
  }

  /** Splits the owned partitions by a new assignment (keys from tpKey). */
  reconcile(assigned: ReadonlySet<string>): { retained: PartitionState<T>[]; revoked: PartitionState<T>[] } {
    const retained: PartitionState<T>[] = [];
    const revoked: PartitionState<T>[] = [];
    for (const state of this.states.values()) (assigned.has(state.key) ? retained : revoked).push(state);
    return { retained, revoked };
  }

  /**
   * Starts what may start, one message per partition in turn so that no partition starves the
   * others, until `full()` says the consumer-wide limit is reached.
   */
  dispatch(full: () => boolean, start: (state: PartitionState<T>, entry: TrackedEntry<T>) => void): void {
    let progressed = true;
    while (progressed && !full()) {
      progressed = false;
      for (const state of this.states.values()) {
        if (full()) return;
        const entry = state.tracker.takeStartable();
        if (!entry) continue;
        progressed = true;
        start(state, entry);
      }
    }
  }

  /** Commits due now: each partition's lowest unfinished offset, where it moved. */
  commitTargets(): CommitTarget[] {
    const targets: CommitTarget[] = [];
    for (const state of this.states.values()) {
      const offset = state.tracker.commitCandidate();
      if (offset === undefined) continue;
      targets.push({
        topic: state.topic,
        partition: state.partition,
        offset,
        acknowledge: () => {
          if (this.isCurrent(state)) state.tracker.markCommitted(offset);
        },
      });
    }
    return targets;
  }

  snapshot(isPaused: (topic: string, partition: number) => boolean): PartitionSnapshot[] {
    return [...this.states.values()].map((s) => ({
      topic: s.topic,
      partition: s.partition,
      highWatermark: s.highWatermark,
      committed: s.tracker.committed,
      lowestUnfinished: s.tracker.lowestUnfinished(),
      unfinished: s.tracker.unfinished,
      paused: isPaused(s.topic, s.partition),
    }));
  }
}
