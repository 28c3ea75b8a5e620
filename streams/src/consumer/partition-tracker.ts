/**
 * Bookkeeping of one partition's accepted messages for the parallel consumer: which may start
 * (concurrency limit, optional per-key order), which are running, which are done, and the offset
 * that is safe to commit — the lowest one not finished yet. Pure and synchronous; the runner
 * does the I/O.
 *
 * Offsets need not be contiguous (compaction, transaction markers), so the tracker keeps entries
 * in offset order and commits the first unfinished entry's offset, or the next offset to fetch
 * when everything accepted is finished.
 */

export type EntryState = 'queued' | 'running' | 'done' | 'dropped';

export interface TrackedEntry<T> {
  readonly offset: bigint;
  /** Messages with the same non-null order key never run at the same time (keyOrdering). */
  readonly orderKey: string | null;
  readonly payload: T;
  state: EntryState;
}

export interface PartitionTrackerOptions {
  /** Messages of this partition that may run at the same time. */
  readonly concurrency: number;
  readonly keyOrdering: boolean;
  /** Where consumption of this partition started: the committed offset, or the reset position. */
  readonly startOffset: bigint;
}

/** Past this many finished entries at the front, arrays are compacted (amortised O(1)). */
const COMPACT_AT = 1024;

export class PartitionTracker<T> {
  private readonly concurrency: number;
  private readonly keyOrdering: boolean;
  private order: TrackedEntry<T>[] = [];
  private head = 0;
  private ready: TrackedEntry<T>[] = [];
  private readyHead = 0;
  private readonly waiting = new Map<string, TrackedEntry<T>[]>();
  private readonly busyKeys = new Set<string>();
  private runningCount = 0;
  private unfinishedCount = 0;
  private queuedCount = 0;
  private nextOffsetValue: bigint;
  private committedValue: bigint;

  constructor({ concurrency, keyOrdering, startOffset }: PartitionTrackerOptions) {
    this.concurrency = concurrency;
    this.keyOrdering = keyOrdering;
    this.nextOffsetValue = startOffset;
    this.committedValue = startOffset;
  }

  /** The next offset to fetch: one past the last accepted message (or past trailing markers). */
  get nextOffset(): bigint {
    return this.nextOffsetValue;
  }

  /** The last offset known to be committed for this partition (the base of the window). */
  get committed(): bigint {
    return this.committedValue;
  }

  get running(): number {
    return this.runningCount;
  }

  /** Accepted and not finished: queued, running, or dropped (dropped never finish). */
  get unfinished(): number {
    return this.unfinishedCount;
  }

  /** Accepted and waiting for a slot (or for an earlier message with the same key). */
  get queued(): number {
    return this.queuedCount;
  }

  /**
   * Offsets between the committed one and the next to fetch: what a crash right now would
   * deliver again. The runner stops accepting when it reaches the configured bound.
   */
  window(): bigint {
    return this.nextOffsetValue - this.committedValue;
  }

  /** Takes a message in. Offsets must grow; anything below nextOffset is already here. */
  accept(offset: bigint, orderKey: string | null, payload: T): TrackedEntry<T> {
    if (offset < this.nextOffsetValue) {
      throw new RangeError(`offset ${offset} is below the next expected offset ${this.nextOffsetValue}`);
    }
    const entry: TrackedEntry<T> = { offset, orderKey, payload, state: 'queued' };
    this.order.push(entry);
    this.unfinishedCount += 1;
    this.queuedCount += 1;
    this.nextOffsetValue = offset + 1n;
    const key = this.keyOrdering ? orderKey : null;
    if (key !== null && this.busyKeys.has(key)) {
      let queue = this.waiting.get(key);
      if (!queue) this.waiting.set(key, (queue = []));
      queue.push(entry);
      return entry;
    }
    if (key !== null) this.busyKeys.add(key);
    this.ready.push(entry);
    return entry;
  }

  /** Moves the fetch position past offsets that carried no message for us (control records). */
  advanceTo(nextOffset: bigint): void {
    if (nextOffset > this.nextOffsetValue) this.nextOffsetValue = nextOffset;
  }

  /** The next message allowed to start now, marked running; undefined when none may start. */
  takeStartable(): TrackedEntry<T> | undefined {
    if (this.runningCount >= this.concurrency) return undefined;
    while (this.readyHead < this.ready.length) {
      const entry = this.ready[this.readyHead]!;
      this.readyHead += 1;
      if (entry.state !== 'queued') continue;
      entry.state = 'running';
      this.runningCount += 1;
      this.queuedCount -= 1;
      this.compactReady();
      return entry;
    }
    return undefined;
  }

  /** Whether a message could start if a slot were free. */
  hasStartable(): boolean {
    for (let i = this.readyHead; i < this.ready.length; i++) if (this.ready[i]!.state === 'queued') return true;
    return false;
  }

  /** Marks a running message finished (processed, forwarded to a retry tier, or dead-lettered). */
  complete(entry: TrackedEntry<T>): void {
    if (entry.state !== 'running') return;
    entry.state = 'done';
    this.runningCount -= 1;
    this.unfinishedCount -= 1;
    const key = this.keyOrdering ? entry.orderKey : null;
    if (key !== null) {
      const queue = this.waiting.get(key);
      const next = queue?.shift();
      if (next) {
        if (queue!.length === 0) this.waiting.delete(key);
        this.ready.push(next);
      } else {
        this.busyKeys.delete(key);
      }
    }
    while (this.head < this.order.length && this.order[this.head]!.state === 'done') this.head += 1;
    if (this.head >= COMPACT_AT && this.head * 2 >= this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  /** The lowest offset not finished, or the next offset to fetch when all is finished. */
  lowestUnfinished(): bigint {
    return this.head < this.order.length ? this.order[this.head]!.offset : this.nextOffsetValue;
  }

  /** The offset to commit now, when it is ahead of the last commit. */
  commitCandidate(): bigint | undefined {
    const candidate = this.lowestUnfinished();
    return candidate > this.committedValue ? candidate : undefined;
  }

  markCommitted(offset: bigint): void {
    if (offset > this.committedValue) this.committedValue = offset;
  }

  /**
   * Gives up every message that has not started (shutdown, lost partition). They stay
   * unfinished, so no commit can pass them: the partition's next owner gets them again.
   */
  dropQueued(): number {
    let dropped = 0;
    for (let i = this.head; i < this.order.length; i++) {
      const entry = this.order[i]!;
      if (entry.state === 'queued') {
        entry.state = 'dropped';
        dropped += 1;
      }
    }
    this.queuedCount = 0;
    this.ready = [];
    this.readyHead = 0;
    this.waiting.clear();
    return dropped;
  }

  private compactReady(): void {
    if (this.readyHead >= COMPACT_AT && this.readyHead * 2 >= this.ready.length) {
      this.ready = this.ready.slice(this.readyHead);
      this.readyHead = 0;
    }
  }
}
