import { FetchAbortedError } from '../errors.ts';

export interface HostPolicy {
  /** Requests in flight to one host at once. */
  readonly maxConcurrency: number;
  /** Least time between two request starts to one host. */
  readonly minDelayMs: number;
}

export interface HostLimiterOptions extends Partial<HostPolicy> {
  /** Host states kept before idle ones are dropped. */
  readonly maxHosts?: number;
  /** Longest pause a Retry-After (or our own backoff) can impose. */
  readonly maxBackoffMs?: number;
  /** Backoff for a 429/503 without Retry-After; doubles on each one in a row. */
  readonly baseBackoffMs?: number;
  /** Crawl-delay is honoured up to this: a robots.txt asking for an hour between requests would stall the host for good. */
  readonly maxCrawlDelayMs?: number;
  readonly now?: () => number;
}

export interface AcquireOptions {
  readonly signal?: AbortSignal;
  /** This host's policy (per-website settings), replacing the defaults from now on. */
  readonly policy?: Partial<HostPolicy>;
  /** robots.txt Crawl-delay: raises the host's delay, never lowers it. */
  readonly crawlDelayMs?: number | null;
}

/** Gives the slot back. Calling it twice is harmless. */
export type Release = () => void;

interface Waiter {
  resolve: (release: Release) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}

interface HostState {
  active: number;
  queue: Waiter[];
  policy: HostPolicy;
  crawlDelayMs: number;
  /** Earliest start of the next request (last start + delay). */
  nextStartAt: number;
  /** Retry-After / backoff: nothing starts before this. */
  blockedUntil: number;
  strikes: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Per-host politeness: at most N requests in flight to a host, starts spaced by a delay (the larger of
 * the configured delay and robots.txt Crawl-delay), and a pause when the host answers 429/503
 * (Retry-After when given, else a doubling backoff). Waiters are served first come first served;
 * waiting is one timer per host, never polling. Hosts with nothing in flight, nobody waiting and no
 * pause pending are forgotten once `maxHosts` is reached, so memory follows the active hosts only.
 *
 * Kafka keys fetches by host, so one worker sees all of a host's traffic; the limits are therefore
 * per worker process, which is per host.
 */
export class HostLimiter {
  private readonly hosts = new Map<string, HostState>();
  private readonly defaults: HostPolicy;
  private readonly maxHosts: number;
  private readonly maxBackoffMs: number;
  private readonly baseBackoffMs: number;
  private readonly maxCrawlDelayMs: number;
  private readonly now: () => number;

  constructor(options: HostLimiterOptions = {}) {
    this.defaults = { maxConcurrency: options.maxConcurrency ?? 2, minDelayMs: options.minDelayMs ?? 0 };
    this.maxHosts = options.maxHosts ?? 10_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 10 * 60_000;
    this.baseBackoffMs = options.baseBackoffMs ?? 1_000;
    this.maxCrawlDelayMs = options.maxCrawlDelayMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Wait for a slot on `host`. Rejects with FetchAbortedError when the signal fires first. */
  acquire(host: string, options: AcquireOptions = {}): Promise<Release> {
    const state = this.stateOf(host);
    if (options.policy) state.policy = { ...state.policy, ...options.policy };
    if (options.crawlDelayMs != null) state.crawlDelayMs = Math.min(Math.max(state.crawlDelayMs, options.crawlDelayMs), this.maxCrawlDelayMs);
    if (options.signal?.aborted) return Promise.reject(new FetchAbortedError(`acquire on ${host} aborted`));
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal: options.signal, onAbort: null };
      if (options.signal) {
        waiter.onAbort = () => {
          const i = state.queue.indexOf(waiter);
          if (i !== -1) state.queue.splice(i, 1);
          reject(new FetchAbortedError(`acquire on ${host} aborted`));
          this.pump(host, state);
        };
        options.signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      state.queue.push(waiter);
      this.pump(host, state);
    });
  }

  /**
   * The host said "slow down" (429/503). Nothing new starts before Retry-After, or, without one, a
   * backoff that doubles with each complaint in a row.
   */
  backoff(host: string, retryAfterMs: number | null): void {
    const state = this.stateOf(host);
    state.strikes++;
    const wait = retryAfterMs ?? this.baseBackoffMs * 2 ** Math.min(state.strikes - 1, 16);
    state.blockedUntil = Math.max(state.blockedUntil, this.now() + Math.min(wait, this.maxBackoffMs));
    this.pump(host, state);
  }

  /** A normal answer: the doubling backoff starts over. */
  succeeded(host: string): void {
    const state = this.hosts.get(host);
    if (state) state.strikes = 0;
  }

  /** For metrics and tests. */
  stats(host: string): { active: number; waiting: number; blockedForMs: number } | null {
    const s = this.hosts.get(host);
    if (!s) return null;
    return { active: s.active, waiting: s.queue.length, blockedForMs: Math.max(0, s.blockedUntil - this.now()) };
  }

  get size(): number {
    return this.hosts.size;
  }

  private stateOf(host: string): HostState {
    let s = this.hosts.get(host);
    if (!s) {
      if (this.hosts.size >= this.maxHosts) this.evictIdle();
      s = { active: 0, queue: [], policy: this.defaults, crawlDelayMs: 0, nextStartAt: 0, blockedUntil: 0, strikes: 0, timer: null };
      this.hosts.set(host, s);
    }
    return s;
  }

  private pump(host: string, state: HostState): void {
    while (state.queue.length > 0 && state.active < state.policy.maxConcurrency) {
      const now = this.now();
      const startAt = Math.max(state.nextStartAt, state.blockedUntil);
      if (startAt > now) {
        this.wakeAt(host, state, startAt - now);
        return;
      }
      const waiter = state.queue.shift()!;
      if (waiter.onAbort) waiter.signal!.removeEventListener('abort', waiter.onAbort);
      state.active++;
      state.nextStartAt = now + Math.max(state.policy.minDelayMs, state.crawlDelayMs);
      let released = false;
      waiter.resolve(() => {
        if (released) return;
        released = true;
        state.active--;
        this.pump(host, state);
      });
    }
  }

  private wakeAt(host: string, state: HostState, delayMs: number): void {
    if (state.timer) return;
    state.timer = setTimeout(() => {
      state.timer = null;
      this.pump(host, state);
    }, delayMs);
  }

  private evictIdle(): void {
    const now = this.now();
    for (const [host, s] of this.hosts) {
      if (s.active === 0 && s.queue.length === 0 && s.timer === null && s.nextStartAt <= now && s.blockedUntil <= now) this.hosts.delete(host);
    }
  }
}

/** A job's per-host politeness as the limiter takes it (CrawlSpec.host_concurrency / host_delay_ms). */
export function hostPolicyOf(spec: { readonly host_concurrency: number; readonly host_delay_ms: number }): Partial<HostPolicy> {
  return {
    ...(spec.host_concurrency > 0 ? { maxConcurrency: spec.host_concurrency } : {}),
    ...(spec.host_delay_ms >= 0 ? { minDelayMs: spec.host_delay_ms } : {}),
  };
}
