import { FetchAbortedError, HostBusyError } from '../errors.ts';
import { envInteger } from '../config/env-integer.ts';

export interface HostPolicy {
  /** Requests in flight to one host at once. */
  readonly maxConcurrency: number;
  /** Least time between two request starts to one host. */
  readonly minDelayMs: number;
}

export interface HostLimiterOptions extends Partial<HostPolicy> {
  /** The platform's cap on requests in flight to one host, whatever a job asks for (TRAWL_HOST_MAX_CONCURRENCY). */
  readonly hostMaxConcurrency?: number;
  /** The longest start spacing a job or a robots.txt Crawl-delay can impose on a host (TRAWL_HOST_MAX_DELAY_MS). */
  readonly maxDelayMs?: number;
  /** A job's policy stops counting on a host once no fetch of it was seen there for this long (TRAWL_HOST_POLICY_TTL_MS). */
  readonly policyTtlMs?: number;
  /** Job policies kept per host; past it the least recently seen is dropped. */
  readonly maxJobsPerHost?: number;
  /**
   * A fetch whose start is further away than this is refused with HostBusyError (its due time) instead
   * of waiting (TRAWL_HOST_DEFER_AFTER_MS). Default: every fetch waits, however long.
   */
  readonly deferAfterMs?: number;
  /** Host states kept before idle ones are dropped. */
  readonly maxHosts?: number;
  /** Longest pause a Retry-After (or our own backoff) can impose. */
  readonly maxBackoffMs?: number;
  /** Backoff for a 429/503 without Retry-After; doubles on each one in a row. */
  readonly baseBackoffMs?: number;
  readonly now?: () => number;
}

export interface AcquireOptions {
  readonly signal?: AbortSignal;
  /** The job the fetch belongs to: its policy counts on this host until it has not been seen for a while. */
  readonly jobId?: string;
  /** The job's policy for this host (per-website settings). */
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

interface JobPolicy {
  readonly policy: Partial<HostPolicy>;
  seenAt: number;
}

interface HostState {
  active: number;
  queue: Waiter[];
  /** The policies of the jobs fetching from this host, by job id (insertion order: least recently seen first). */
  jobs: Map<string, JobPolicy>;
  policy: HostPolicy;
  crawlDelayMs: number;
  /** Earliest start of the next request (last start + delay). */
  nextStartAt: number;
  /** Retry-After / backoff: nothing starts before this. */
  blockedUntil: number;
  /** The latest start time promised to a deferred fetch, so that deferred fetches come back spread out. */
  promisedUntil: number;
  strikes: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Per-host politeness shared by every job on the host: at most N requests in flight, starts spaced by a
 * delay, and a pause when the host answers 429/503 (Retry-After when given, else a doubling backoff).
 *
 * N and the delay are the most conservative of the jobs active on the host — the lowest concurrency
 * and the longest delay any of them asked for (and robots.txt Crawl-delay) — with N capped by
 * `hostMaxConcurrency` and the delay by `maxDelayMs`, so no job can lift another's politeness, and
 * none can throttle a host for everyone past the platform's ceiling. A job's policy expires once
 * none of its fetches was seen for `policyTtlMs`.
 *
 * A fetch that would wait longer than `deferAfterMs` (a Retry-After pause, spacing) does not wait: it is
 * refused with HostBusyError carrying the time it may start, each refused one promised a later slot
 * than the last, and the caller parks it elsewhere. Waiters are served first come first served;
 * waiting is one timer per host, never polling. Idle hosts are forgotten once `maxHosts` is reached.
 *
 * Kafka keys fetches by host, so one worker sees all of a host's traffic; the limits are therefore
 * per worker process, which is per host.
 */
export class HostLimiter {
  private readonly hosts = new Map<string, HostState>();
  private readonly defaults: HostPolicy;
  private readonly hostMaxConcurrency: number;
  private readonly maxDelayMs: number;
  private readonly policyTtlMs: number;
  private readonly maxJobsPerHost: number;
  private readonly deferAfterMs: number;
  private readonly maxHosts: number;
  private readonly maxBackoffMs: number;
  private readonly baseBackoffMs: number;
  private readonly now: () => number;

  constructor(options: HostLimiterOptions = {}) {
    this.defaults = { maxConcurrency: options.maxConcurrency ?? 2, minDelayMs: options.minDelayMs ?? 0 };
    this.hostMaxConcurrency = Math.max(1, options.hostMaxConcurrency ?? Infinity);
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.policyTtlMs = options.policyTtlMs ?? 10 * 60_000;
    this.maxJobsPerHost = Math.max(1, options.maxJobsPerHost ?? 1_000);
    this.deferAfterMs = options.deferAfterMs ?? Infinity;
    this.maxHosts = options.maxHosts ?? 10_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 10 * 60_000;
    this.baseBackoffMs = options.baseBackoffMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Wait for a slot on `host`. Rejects with FetchAbortedError when the signal fires first, and with
   * HostBusyError when the slot is further away than `deferAfterMs`.
   */
  acquire(host: string, options: AcquireOptions = {}): Promise<Release> {
    const state = this.stateOf(host);
    const now = this.now();
    if (options.policy) this.seen(state, options.jobId ?? '', options.policy, now);
    this.expire(state, now);
    if (options.crawlDelayMs != null) state.crawlDelayMs = Math.min(Math.max(state.crawlDelayMs, options.crawlDelayMs), this.maxDelayMs);
    state.policy = this.effective(state);
    if (options.signal?.aborted) return Promise.reject(new FetchAbortedError(`acquire on ${host} aborted`));
    const deferred = this.deferralOnArrival(host, state, now);
    if (deferred) return Promise.reject(deferred);
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
  stats(host: string): { active: number; waiting: number; blockedForMs: number; policy: HostPolicy; jobs: number } | null {
    const s = this.hosts.get(host);
    if (!s) return null;
    return { active: s.active, waiting: s.queue.length, blockedForMs: Math.max(0, s.blockedUntil - this.now()), policy: s.policy, jobs: s.jobs.size };
  }

  get size(): number {
    return this.hosts.size;
  }

  private stateOf(host: string): HostState {
    let s = this.hosts.get(host);
    if (!s) {
      if (this.hosts.size >= this.maxHosts) this.evictIdle();
      s = { active: 0, queue: [], jobs: new Map(), policy: this.defaults, crawlDelayMs: 0, nextStartAt: 0, blockedUntil: 0, promisedUntil: 0, strikes: 0, timer: null };
      this.hosts.set(host, s);
    }
    return s;
  }

  /** Records (or refreshes) a job's policy on the host, keeping the map in least-recently-seen order. */
  private seen(state: HostState, jobId: string, policy: Partial<HostPolicy>, now: number): void {
    state.jobs.delete(jobId);
    state.jobs.set(jobId, { policy, seenAt: now });
    if (state.jobs.size > this.maxJobsPerHost) state.jobs.delete(state.jobs.keys().next().value!);
  }

  private expire(state: HostState, now: number): void {
    for (const [jobId, job] of state.jobs) {
      if (now - job.seenAt <= this.policyTtlMs) break;
      state.jobs.delete(jobId);
    }
  }

  /** The most conservative policy of the host's jobs (the defaults when none says), within the platform's bounds. */
  private effective(state: HostState): HostPolicy {
    let maxConcurrency = Infinity;
    let minDelayMs = -Infinity;
    for (const { policy } of state.jobs.values()) {
      if (policy.maxConcurrency !== undefined) maxConcurrency = Math.min(maxConcurrency, policy.maxConcurrency);
      if (policy.minDelayMs !== undefined) minDelayMs = Math.max(minDelayMs, policy.minDelayMs);
    }
    if (maxConcurrency === Infinity) maxConcurrency = this.defaults.maxConcurrency;
    if (minDelayMs === -Infinity) minDelayMs = this.defaults.minDelayMs;
    return {
      maxConcurrency: Math.max(1, Math.min(maxConcurrency, this.hostMaxConcurrency)),
      minDelayMs: Math.min(Math.max(0, minDelayMs), this.maxDelayMs),
    };
  }

  private delayOf(state: HostState): number {
    return Math.max(state.policy.minDelayMs, state.crawlDelayMs);
  }

  /**
   * HostBusyError when this fetch's start lies more than `deferAfterMs` ahead: behind a pause, or
   * behind the spacing of those already queued.
   */
  private deferralOnArrival(host: string, state: HostState, now: number): HostBusyError | null {
    if (this.deferAfterMs === Infinity) return null;
    const queuedAhead = Math.floor(state.queue.length / state.policy.maxConcurrency);
    const startAt = Math.max(state.blockedUntil, state.nextStartAt + queuedAhead * this.delayOf(state));
    return startAt - now > this.deferAfterMs ? this.deferral(host, state, now, startAt) : null;
  }

  /** Each deferred fetch is promised a start one delay after the last promise, so deferred fetches come back one at a time rather than all at once. */
  private deferral(host: string, state: HostState, now: number, startAt: number = Math.max(state.blockedUntil, state.nextStartAt)): HostBusyError {
    const delay = this.delayOf(state);
    const dueAt = state.promisedUntil > now ? Math.max(startAt, state.promisedUntil + delay) : startAt;
    state.promisedUntil = dueAt;
    const why = state.blockedUntil === startAt ? 'paused by its answers (429/503)' : `spacing its requests ${delay} ms apart`;
    return new HostBusyError(`${host} is ${why}: this fetch may start in ${dueAt - now} ms`, dueAt);
  }

  private pump(host: string, state: HostState): void {
    if (state.queue.length > 0 && Math.max(state.nextStartAt, state.blockedUntil) - this.now() > this.deferAfterMs) {
      // A pause landed (or the spacing grew) while they waited: they wait elsewhere, not here.
      for (const waiter of state.queue.splice(0)) {
        if (waiter.onAbort) waiter.signal!.removeEventListener('abort', waiter.onAbort);
        waiter.reject(this.deferral(host, state, this.now()));
      }
      return;
    }
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
      state.nextStartAt = now + this.delayOf(state);
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
      if (s.active === 0 && s.queue.length === 0 && s.timer === null && s.nextStartAt <= now && s.blockedUntil <= now && s.promisedUntil <= now) this.hosts.delete(host);
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

/** The limiter's platform bounds from the environment (TRAWL_HOST_*), for the worker. */
export function hostLimiterOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): HostLimiterOptions {
  const read = (name: string, dflt: number, min: number): number => envInteger(env, name, dflt, min);
  return {
    hostMaxConcurrency: read('TRAWL_HOST_MAX_CONCURRENCY', 16, 1),
    maxDelayMs: read('TRAWL_HOST_MAX_DELAY_MS', 60_000, 0),
    policyTtlMs: read('TRAWL_HOST_POLICY_TTL_MS', 10 * 60_000, 1_000),
    deferAfterMs: read('TRAWL_HOST_DEFER_AFTER_MS', 1_000, 0),
  };
}
