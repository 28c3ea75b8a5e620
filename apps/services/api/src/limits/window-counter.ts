/**
 * Fixed-window counters by key, in memory: the API's rate limits (per key, per client address,
 * per address for failed authentications). Pure apart from the clock it is given.
 *
 * Bounded: at most `maxKeys` counters are held. When full, windows that are over are dropped
 * first (the map is in window-start order, since a counter is re-inserted when its window
 * restarts), then the oldest; a dropped counter starts again from zero, which at worst gives
 * back part of one window's budget to whoever made the map overflow.
 */

export interface WindowCounterOptions {
  /** What one key may take per window. */
  readonly max: number;
  readonly windowMs: number;
  readonly maxKeys?: number;
  readonly now?: () => number;
}

export interface Take {
  readonly allowed: boolean;
  /** What is left in this window after this take. */
  readonly remaining: number;
  /** When the window restarts, ms since the epoch. */
  readonly resetAt: number;
}

interface Window {
  count: number;
  readonly resetAt: number;
}

export class WindowCounter {
  readonly max: number;
  readonly windowMs: number;
  private readonly windows = new Map<string, Window>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(options: WindowCounterOptions) {
    this.max = options.max;
    this.windowMs = options.windowMs;
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.windows.size;
  }

  /** Takes one from the key's budget when there is one left; a refused take costs nothing. */
  take(key: string): Take {
    const w = this.current(key, true)!;
    if (w.count >= this.max) return { allowed: false, remaining: 0, resetAt: w.resetAt };
    w.count++;
    return { allowed: true, remaining: this.max - w.count, resetAt: w.resetAt };
  }

  /** Gives one back (a take that turned out not to count), never below zero. */
  give(key: string): void {
    const w = this.current(key, false);
    if (w && w.count > 0) w.count--;
  }

  /** Whether the key has budget left, without taking any. */
  check(key: string): Take {
    const w = this.current(key, false);
    if (!w) return { allowed: true, remaining: this.max, resetAt: this.now() + this.windowMs };
    return { allowed: w.count < this.max, remaining: Math.max(0, this.max - w.count), resetAt: w.resetAt };
  }

  private current(key: string, create: boolean): Window | undefined {
    const now = this.now();
    const w = this.windows.get(key);
    if (w && w.resetAt > now) return w;
    if (w) this.windows.delete(key);
    if (!create) return undefined;
    this.makeRoom(now);
    const fresh = { count: 0, resetAt: now + this.windowMs };
    this.windows.set(key, fresh);
    return fresh;
  }

  private makeRoom(now: number): void {
    if (this.windows.size < this.maxKeys) return;
    for (const [key, w] of this.windows) {
      if (w.resetAt > now) break;
      this.windows.delete(key);
    }
    while (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
  }
}
