/**
 * A fixed number of slots shared by many keys (the worker's parse threads, shared by every job
 * on the worker), handed out in turn between keys: when a slot frees, the waiting key with the
 * least work running gets it, and among those the one that waited longest since it was last
 * served, whatever order their work arrived in. A job with 10,000 pages waiting and a job with one
 * therefore take turns, and the one page waits for at most one page of the other job per slot,
 * not for the whole backlog.
 *
 * Work starts only when it holds a slot, so the time it runs is its own: the parse limit
 * (parse-pool.ts) is counted from the start, not from a wait behind another job's slow page.
 *
 * Work that turns out slow can give its slot back while it goes on (`lease.detach()`), up to
 * `maxDetached` pieces at once: a page whose parse runs long then stops holding one of the slots
 * every other job's pages take turns on, as long as there is room for it beside them.
 */
export interface SlotLease {
  /** Frees this work's slot while it goes on running; false when `maxDetached` are detached already (the slot stays held). */
  detach(): boolean;
}

export class FairSlots<K> {
  private running = 0;
  private detached = 0;
  /** Work running, detached or not, by key; a key is here only while it has some. */
  private readonly runningByKey = new Map<K, number>();
  /** Work waiting, by key, in arrival order; a key is here only while it has some. */
  private readonly waiting = new Map<K, (() => void)[]>();

  constructor(
    readonly slots: number,
    readonly maxDetached = 0,
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive whole number, not ${slots}`);
  }

  /** Work started and not yet ended, detached or not. */
  get busy(): number {
    return this.running + this.detached;
  }

  /** Work waiting for a slot, all keys together. */
  get queued(): number {
    let n = 0;
    for (const list of this.waiting.values()) n += list.length;
    return n;
  }

  /**
   * Runs `work` once a slot is free and it is `key`'s turn; the slot is freed when it settles.
   * A `signal` aborted while waiting takes the work out of the line (rejecting with its reason).
   */
  async run<T>(key: K, work: (lease: SlotLease) => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.running < this.slots && this.waiting.size === 0) {
      this.running += 1;
      this.countRunning(key);
    } else {
      await this.turn(key, signal);
    }
    let detached = false;
    const lease: SlotLease = {
      detach: () => {
        if (detached) return true;
        if (this.detached >= this.maxDetached) return false;
        detached = true;
        this.detached += 1;
        this.running -= 1;
        this.next();
        return true;
      },
    };
    try {
      return await work(lease);
    } finally {
      const left = this.runningByKey.get(key)! - 1;
      if (left === 0) this.runningByKey.delete(key);
      else this.runningByKey.set(key, left);
      if (detached) {
        this.detached -= 1;
      } else {
        this.running -= 1;
        this.next();
      }
    }
  }

  private turn(key: K, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const list = this.waiting.get(key);
        const at = list?.indexOf(start) ?? -1;
        if (list && at >= 0) {
          list.splice(at, 1);
          if (list.length === 0) this.waiting.delete(key);
        }
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const list = this.waiting.get(key);
      if (list) list.push(start);
      else this.waiting.set(key, [start]);
    });
  }

  /** Gives free slots to waiting keys: the least running first, then the longest waiting; a key served goes to the back. */
  private next(): void {
    while (this.running < this.slots && this.waiting.size > 0) {
      let chosen: K | undefined;
      let fewest = Infinity;
      for (const key of this.waiting.keys()) {
        const running = this.runningByKey.get(key) ?? 0;
        if (running < fewest) {
          chosen = key;
          fewest = running;
          if (running === 0) break;
        }
      }
      const list = this.waiting.get(chosen!)!;
      const start = list.shift()!;
      this.waiting.delete(chosen!);
      // Re-inserted at the end of the Map's order: the other keys come first next time.
      if (list.length > 0) this.waiting.set(chosen!, list);
      this.running += 1;
      this.countRunning(chosen!);
      start();
    }
  }

  private countRunning(key: K): void {
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
  }
}
