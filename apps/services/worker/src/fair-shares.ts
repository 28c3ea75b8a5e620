/**
 * A fixed number of slots shared between keys (jobs) by max-min fair shares, each recently active
 * key keeping room for what it recently used.
 *
 * Handing a freed slot to the waiting key with the fewest running is not enough when one key's work
 * is slow and another's fast: a crawl's next fetch comes a frontier round trip after its last one
 * ended, by which time its slot went to the other job's backlog, so each of its fetches waited for
 * one of the slow ones to end — with 64 slots held by fetches that hang 30 s, half a second each.
 * So each key gets a share, recomputed at every hand-out:
 *
 * - A key's demand is the most it has had running and waiting at once since it became active. It
 *   stays active while it has work running or waiting, and for `holdMs` after (a crawl between two
 *   fetches is still crawling).
 * - Shares are max-min fair over the active keys' demands (water-filling): a key asking for less
 *   than an equal split gets what it asks, the rest is split between the others. A key alone gets
 *   every slot; nothing is reserved for keys not seen.
 * - A key starts work while it runs fewer than its share (rounded up) and a slot is free; among keys
 *   that may, the one with the fewest running, then the one served least recently.
 *
 * So a job with 10,000 slow fetches beside a job that runs 2 at a time holds at most `slots − 2`:
 * the other job's next fetch finds its slot free. What it costs: slots kept for a key that does not
 * come back stay idle for `holdMs`, and a large key keeps its claim (at most an equal split) as long.
 */

export interface FairSharesOptions {
  /** How long a key with nothing running or waiting keeps its claim. */
  readonly holdMs?: number;
  readonly now?: () => number;
}

/** A crawl's next fetch comes one frontier round trip (consume, decide, produce, consume) after its last. */
export const DEFAULT_HOLD_MS = 2_000;

interface Waiter {
  readonly start: () => void;
  readonly onAbort: () => void;
}

interface KeyState {
  running: number;
  readonly waiting: Waiter[];
  /** Most running + waiting at once since the key became active: its demand. */
  peak: number;
  /** When it last had nothing running or waiting; null while it has. */
  idleSince: number | null;
  /** Hand-outs so far when it was last served (least recently served first among equals). */
  servedAt: number;
}

export class FairShares<K> {
  private readonly keys = new Map<K, KeyState>();
  private running = 0;
  private handedOut = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private readonly holdMs: number;
  private readonly now: () => number;

  constructor(
    readonly slots: number,
    options: FairSharesOptions = {},
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive whole number, not ${slots}`);
    this.holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
    this.now = options.now ?? Date.now;
  }

  /** Work holding a slot. */
  get busy(): number {
    return this.running;
  }

  /** Work waiting for a slot, all keys together. */
  get queued(): number {
    let n = 0;
    for (const s of this.keys.values()) n += s.waiting.length;
    return n;
  }

  /** Each active key's share now (for tests and gauges). */
  shares(): Map<K, number> {
    const byState = this.computeShares();
    return new Map([...this.keys].map(([key, s]) => [key, byState.get(s)!]));
  }

  /**
   * Runs `work` once `key` may take a slot; the slot is freed when it settles. A `signal` aborted
   * while waiting takes the work out of line (rejecting with its reason).
   */
  async run<T>(key: K, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const state = this.stateOf(key);
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', waiter.onAbort);
          resolve();
        },
        onAbort: () => {
          const at = state.waiting.indexOf(waiter);
          if (at !== -1) state.waiting.splice(at, 1);
          this.idleCheck(state);
          reject(signal!.reason);
          this.pump();
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      state.waiting.push(waiter);
      state.peak = Math.max(state.peak, state.running + state.waiting.length);
      this.pump();
    });
    try {
      return await work();
    } finally {
      state.running -= 1;
      this.running -= 1;
      this.idleCheck(state);
      this.pump();
    }
  }

  private stateOf(key: K): KeyState {
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = { running: 0, waiting: [], peak: 0, idleSince: null, servedAt: 0 }));
    state.idleSince = null;
    return state;
  }

  private idleCheck(state: KeyState): void {
    if (state.running === 0 && state.waiting.length === 0) state.idleSince = this.now();
  }

  private pump(): void {
    const now = this.now();
    for (const [key, s] of this.keys) if (s.idleSince !== null && now - s.idleSince >= this.holdMs) this.keys.delete(key);
    while (this.running < this.slots) {
      const shares = this.computeShares();
      let chosen: KeyState | undefined;
      for (const s of this.keys.values()) {
        if (s.waiting.length === 0 || s.running >= Math.ceil(shares.get(s)!)) continue;
        if (!chosen || s.running < chosen.running || (s.running === chosen.running && s.servedAt < chosen.servedAt)) chosen = s;
      }
      if (!chosen) break;
      const waiter = chosen.waiting.shift()!;
      chosen.running += 1;
      this.running += 1;
      chosen.servedAt = ++this.handedOut;
      waiter.start();
    }
    this.wakeForExpiry(now);
  }

  /** Max-min fair shares of the slots over the keys' demands (water-filling). */
  private computeShares(): Map<KeyState, number> {
    const states = [...this.keys.values()].sort((a, b) => this.demand(a) - this.demand(b));
    const shares = new Map<KeyState, number>();
    let left = this.slots;
    states.forEach((s, i) => {
      const share = Math.min(this.demand(s), left / (states.length - i));
      shares.set(s, share);
      left -= share;
    });
    return shares;
  }

  private demand(s: KeyState): number {
    return Math.max(s.peak, s.running + s.waiting.length);
  }

  /** Work held back by a claim of an idle key runs when the claim lapses: one timer, for the first to lapse. */
  private wakeForExpiry(now: number): void {
    if (this.running >= this.slots || this.queued === 0) return;
    let at = Infinity;
    for (const s of this.keys.values()) if (s.idleSince !== null) at = Math.min(at, s.idleSince + this.holdMs);
    if (at === Infinity || (this.timer && this.timerAt <= at)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.pump();
    }, Math.max(0, at - now));
    this.timer.unref();
  }
}
