import { FetchAbortedError, HostBusyError } from '../errors.ts';
import { envInteger } from '../config/env-integer.ts';

export interface HostPolicy {
  /** Requests in flight to one host at once. */
  readonly maxConcurrency: number;
  /** Least time between two request starts to one host. */
  readonly minDelayMs: number;
  /**
   * The delay paces the job's fetches rather than spacing them on purpose (the adaptive throttle
   * sets it to latency / concurrency): a fetch waits its turn behind the job's queue as it would
   * for a slot, instead of being deferred for the spacing of the fetches queued ahead of it.
   */
  readonly paced?: boolean;
}

export interface HostLimiterOptions extends Partial<HostPolicy> {
  /** The operator's cap on requests in flight to one host, all jobs together (TRAWL_HOST_MAX_CONCURRENCY); also the most a job may ask for. */
  readonly hostMaxConcurrency?: number;
  /** The longest start spacing a job's policy or a robots.txt Crawl-delay can impose (TRAWL_HOST_MAX_DELAY_MS). */
  readonly maxDelayMs?: number;
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
  /** The job the fetch belongs to: its policy constrains its own fetches on this host, no one else's. */
  readonly jobId?: string;
  /** The job's policy for this host (per-website settings); the limiter's defaults when absent. */
  readonly policy?: Partial<HostPolicy>;
  /** robots.txt Crawl-delay: spaces every job's requests to the host, raised, never lowered. */
  readonly crawlDelayMs?: number | null;
  /**
   * Waits out the spacing (the job's delay, the Crawl-delay) however far its turn is, instead of
   * being refused with HostBusyError: for a request that cannot be parked on its own, such as a
   * login's second step, whose deferral would restart the login from its first request and meet the
   * same spacing again. A pause of the host (a 429's Retry-After, up to minutes) still defers it: a
   * pause is rare, and waiting it out would hold the worker's fetch slot all along.
   */
  readonly patient?: boolean;
}

/** Gives the slot back. Calling it twice is harmless. */
export type Release = () => void;

interface Waiter {
  /** Arrival order over the whole limiter: among jobs equally served, the longest waiting goes first. */
  readonly seq: number;
  /** AcquireOptions.patient: deferred for a pause of the host only, never for spacing. */
  readonly patient: boolean;
  resolve: (release: Release) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}

/** One job's fetches on one host: its own policy, its own slots and spacing, its own deferrals. */
interface JobOnHost {
  policy: HostPolicy;
  active: number;
  queue: Waiter[];
  /** Earliest start of this job's next request (its last start + its delay). */
  nextStartAt: number;
  /** The latest start promised to a deferred fetch of this job, so that they come back spread out. */
  promisedUntil: number;
}

interface HostState {
  /** Requests in flight to the host, all jobs together. */
  active: number;
  /** Waiters of all jobs together. */
  waiting: number;
  /** By job id, least recently seen first. */
  jobs: Map<string, JobOnHost>;
  crawlDelayMs: number;
  /** Earliest start of the host's next request, whoever's (last start + Crawl-delay). */
  nextStartAt: number;
  /** Retry-After / backoff: nothing starts before this. */
  blockedUntil: number;
  strikes: number;
  timer: NodeJS.Timeout | null;
  timerAt: number;
}

/**
 * Per-host politeness, split by whom each rule concerns.
 *
 * What concerns everyone is kept per host and applies to every job's fetches there: robots.txt
 * Crawl-delay (the site's wish about this crawler, whoever runs the crawl) spaces all starts; a
 * 429/503 pauses the host for all (Retry-After when given, else a doubling backoff: the server's
 * answer is about the load of all of us); and the operator's cap, `hostMaxConcurrency`, bounds the
 * requests in flight to the host, all jobs together.
 *
 * What a job asks for is its own: its `host_concurrency` and `host_delay_ms` (hostPolicyOf) limit
 * its own fetches on the host — slots and spacing per (host, job) — within those bounds (its
 * concurrency at most `hostMaxConcurrency`, its delay at most `maxDelayMs`). A job asking for one
 * request a minute crawls slowly itself; another job on the same host is not slowed by it, and one
 * asking for 64 in flight lifts no one's limits but its own, under the operator's cap. (Before,
 * the host ran on the strictest policy of its jobs, so any tenant could throttle a popular host for
 * everyone.)
 *
 * At the host's cap, a freed slot goes to the waiting job with the fewest requests in flight there,
 * then to the longest waiting: a job with many fetches queued on a host cannot keep another job's
 * one fetch behind all of them.
 *
 * A fetch that would wait longer than `deferAfterMs` (a pause, its job's spacing, the Crawl-delay)
 * does not wait: it is refused with HostBusyError carrying the time it may start, each refused fetch
 * of a job promised a later slot than the last, and the caller parks it elsewhere. Waiting is one
 * timer per host, never polling. A job's state on a host is forgotten once it has nothing in flight,
 * waiting or promised and its spacing has passed; idle hosts are forgotten once `maxHosts` is reached.
 *
 * Kafka keys fetches by host, so one worker sees all of a host's traffic; the limits are therefore
 * per worker process, which is per host.
 */
export class HostLimiter {
  private readonly hosts = new Map<string, HostState>();
  private readonly defaults: HostPolicy;
  private readonly hostMaxConcurrency: number;
  private readonly maxDelayMs: number;
  private readonly deferAfterMs: number;
  private readonly maxHosts: number;
  private readonly maxBackoffMs: number;
  private readonly baseBackoffMs: number;
  private readonly now: () => number;
  private seq = 0;

  constructor(options: HostLimiterOptions = {}) {
    this.defaults = { maxConcurrency: options.maxConcurrency ?? 2, minDelayMs: options.minDelayMs ?? 0 };
    this.hostMaxConcurrency = Math.max(1, options.hostMaxConcurrency ?? Infinity);
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.deferAfterMs = options.deferAfterMs ?? Infinity;
    this.maxHosts = options.maxHosts ?? 10_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 10 * 60_000;
    this.baseBackoffMs = options.baseBackoffMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Wait for a slot on `host` for the fetch of `jobId`. Rejects with FetchAbortedError when the signal
   * fires first, and with HostBusyError when the slot is further away than `deferAfterMs`.
   */
  acquire(host: string, options: AcquireOptions = {}): Promise<Release> {
    const state = this.stateOf(host);
    const now = this.now();
    if (options.crawlDelayMs != null) state.crawlDelayMs = Math.min(Math.max(state.crawlDelayMs, options.crawlDelayMs), this.maxDelayMs);
    const job = this.jobOf(state, options.jobId ?? '', options.policy, now);
    if (options.signal?.aborted) return Promise.reject(new FetchAbortedError(`acquire on ${host} aborted`));
    const deferred = options.patient ? this.pauseDeferral(host, state, job, now) : this.deferralOnArrival(host, state, job, now);
    if (deferred) return Promise.reject(deferred);
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { seq: this.seq++, patient: options.patient === true, resolve, reject, signal: options.signal, onAbort: null };
      if (options.signal) {
        waiter.onAbort = () => {
          const i = job.queue.indexOf(waiter);
          if (i !== -1) {
            job.queue.splice(i, 1);
            state.waiting--;
          }
          reject(new FetchAbortedError(`acquire on ${host} aborted`));
          this.pump(host, state);
        };
        options.signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      job.queue.push(waiter);
      state.waiting++;
      this.pump(host, state);
    });
  }

  /**
   * The host said "slow down" (429/503). Nothing new starts before Retry-After, or, without one, a
   * backoff that doubles with each complaint in a row — for every job: the answer concerns them all.
   */
  backoff(host: string, retryAfterMs: number | null): void {
    const state = this.stateOf(host);
    state.strikes++;
    const wait = retryAfterMs ?? this.baseBackoffMs * 2 ** Math.min(state.strikes - 1, 16);
    state.blockedUntil = Math.max(state.blockedUntil, this.now() + Math.min(wait, this.maxBackoffMs));
    this.pump(host, state);
  }

  /**
   * A job's policy on the host changed while its fetches wait (the adaptive throttle, after an
   * answer): applied at once to what waits, not only to the fetches that arrive from now on.
   */
  updatePolicy(host: string, jobId: string, policy: Partial<HostPolicy>): void {
    const state = this.hosts.get(host);
    const job = state?.jobs.get(jobId);
    if (!state || !job) return;
    job.policy = this.bounded(policy);
    this.pump(host, state);
  }

  /** A normal answer: the doubling backoff starts over. */
  succeeded(host: string): void {
    const state = this.hosts.get(host);
    if (state) state.strikes = 0;
  }

  /** The host's shared state, for metrics and tests. */
  stats(host: string): { active: number; waiting: number; blockedForMs: number; crawlDelayMs: number; jobs: number } | null {
    const s = this.hosts.get(host);
    if (!s) return null;
    return { active: s.active, waiting: s.waiting, blockedForMs: Math.max(0, s.blockedUntil - this.now()), crawlDelayMs: s.crawlDelayMs, jobs: s.jobs.size };
  }

  /** One job's state on a host (its policy as applied, within the bounds), for metrics and tests. */
  jobStats(host: string, jobId: string): { active: number; waiting: number; policy: HostPolicy } | null {
    const job = this.hosts.get(host)?.jobs.get(jobId);
    return job ? { active: job.active, waiting: job.queue.length, policy: job.policy } : null;
  }

  get size(): number {
    return this.hosts.size;
  }

  private stateOf(host: string): HostState {
    let s = this.hosts.get(host);
    if (!s) {
      if (this.hosts.size >= this.maxHosts) this.evictIdle();
      s = { active: 0, waiting: 0, jobs: new Map(), crawlDelayMs: 0, nextStartAt: 0, blockedUntil: 0, strikes: 0, timer: null, timerAt: Infinity };
      this.hosts.set(host, s);
    }
    return s;
  }

  /**
   * The job's state on the host, its policy refreshed and moved to the most recently seen end. Job
   * states that no longer matter are dropped from the least recently seen end on the way; one that
   * still does (in flight, waiting, or its spacing not over) stops the sweep, so what a host keeps is
   * bounded by the jobs seen on it within the longest spacing (`maxDelayMs`), never by a count that
   * would have to drop a job's pending spacing.
   */
  private jobOf(state: HostState, jobId: string, policy: Partial<HostPolicy> | undefined, now: number): JobOnHost {
    let job = state.jobs.get(jobId);
    if (job) state.jobs.delete(jobId);
    job ??= { policy: this.bounded(policy), active: 0, queue: [], nextStartAt: 0, promisedUntil: 0 };
    if (policy) job.policy = this.bounded(policy);
    for (const [id, other] of state.jobs) {
      if (!forgettable(other, now)) break;
      state.jobs.delete(id);
    }
    state.jobs.set(jobId, job);
    return job;
  }

  /** A job's policy (the defaults for what it does not say) within the operator's bounds. */
  private bounded(policy: Partial<HostPolicy> | undefined): HostPolicy {
    return {
      maxConcurrency: Math.max(1, Math.min(policy?.maxConcurrency ?? this.defaults.maxConcurrency, this.hostMaxConcurrency)),
      minDelayMs: Math.min(Math.max(0, policy?.minDelayMs ?? this.defaults.minDelayMs), this.maxDelayMs),
      ...(policy?.paced ? { paced: true } : {}),
    };
  }

  /** Earliest moment the job's next fetch may start on the host, by time alone: the pause, the host's spacing, the job's. */
  private earliest(state: HostState, job: JobOnHost): number {
    return Math.max(state.blockedUntil, state.nextStartAt, job.nextStartAt);
  }

  /**
   * HostBusyError when this fetch's start lies more than `deferAfterMs` ahead: behind a pause, or
   * behind the spacing of the fetches already queued (the job's own, and everyone's Crawl-delay).
   */
  private deferralOnArrival(host: string, state: HostState, job: JobOnHost, now: number): HostBusyError | null {
    if (this.deferAfterMs === Infinity) return null;
    const startAt = Math.max(
      state.blockedUntil,
      state.nextStartAt + state.waiting * state.crawlDelayMs,
      job.nextStartAt + (job.policy.paced ? 0 : job.queue.length * job.policy.minDelayMs),
    );
    return startAt - now > this.deferAfterMs ? this.deferral(host, state, job, now, startAt) : null;
  }

  /** HostBusyError for a patient fetch: only when the host's pause lies more than `deferAfterMs` ahead. */
  private pauseDeferral(host: string, state: HostState, job: JobOnHost, now: number): HostBusyError | null {
    if (this.deferAfterMs === Infinity || state.blockedUntil - now <= this.deferAfterMs) return null;
    return this.deferral(host, state, job, now, state.blockedUntil);
  }

  /** Each deferred fetch of a job is promised a start one delay after the job's last promise, so deferred fetches come back one at a time rather than all at once. */
  private deferral(host: string, state: HostState, job: JobOnHost, now: number, startAt: number = this.earliest(state, job)): HostBusyError {
    const spacing = Math.max(job.policy.minDelayMs, state.crawlDelayMs);
    const dueAt = job.promisedUntil > now ? Math.max(startAt, job.promisedUntil + spacing) : startAt;
    job.promisedUntil = dueAt;
    const why =
      state.blockedUntil >= startAt
        ? `${host} is paused by its answers (429/503)`
        : job.policy.minDelayMs >= state.crawlDelayMs
          ? `this job spaces its requests to ${host} ${job.policy.minDelayMs} ms apart`
          : `${host} asks for ${state.crawlDelayMs} ms between requests (robots.txt Crawl-delay)`;
    return new HostBusyError(`${why}: this fetch may start in ${dueAt - now} ms`, dueAt);
  }

  private pump(host: string, state: HostState): void {
    const now = this.now();
    if (state.waiting > 0 && this.deferAfterMs !== Infinity) {
      // A pause landed (or a spacing grew) while they waited: they wait elsewhere, not here.
      for (const job of state.jobs.values()) {
        if (job.queue.length === 0 || this.earliest(state, job) - now <= this.deferAfterMs) continue;
        const paused = state.blockedUntil - now > this.deferAfterMs;
        for (const waiter of job.queue.filter((w) => paused || !w.patient)) {
          job.queue.splice(job.queue.indexOf(waiter), 1);
          state.waiting--;
          if (waiter.onAbort) waiter.signal!.removeEventListener('abort', waiter.onAbort);
          waiter.reject(this.deferral(host, state, job, now));
        }
      }
    }
    while (state.waiting > 0 && state.active < this.hostMaxConcurrency && now >= state.blockedUntil && now >= state.nextStartAt) {
      const job = this.nextJob(state, now);
      if (!job) break;
      const waiter = job.queue.shift()!;
      state.waiting--;
      if (waiter.onAbort) waiter.signal!.removeEventListener('abort', waiter.onAbort);
      job.active++;
      state.active++;
      job.nextStartAt = now + job.policy.minDelayMs;
      state.nextStartAt = now + state.crawlDelayMs;
      let released = false;
      waiter.resolve(() => {
        if (released) return;
        released = true;
        job.active--;
        state.active--;
        this.pump(host, state);
      });
    }
    // What waits on time alone (a pause, a spacing) is woken by the timer; what waits on a slot, by a release.
    if (state.waiting > 0 && state.active < this.hostMaxConcurrency) {
      let wakeAt = Infinity;
      for (const job of state.jobs.values()) {
        if (job.queue.length > 0 && job.active < job.policy.maxConcurrency) wakeAt = Math.min(wakeAt, this.earliest(state, job));
      }
      if (wakeAt > now && wakeAt !== Infinity) this.wakeAt(host, state, wakeAt, now);
    }
  }

  /** Among the jobs whose next fetch may start now: the fewest in flight on the host, then the longest waiting. */
  private nextJob(state: HostState, now: number): JobOnHost | undefined {
    let chosen: JobOnHost | undefined;
    for (const job of state.jobs.values()) {
      if (job.queue.length === 0 || job.active >= job.policy.maxConcurrency || job.nextStartAt > now) continue;
      if (!chosen || job.active < chosen.active || (job.active === chosen.active && job.queue[0]!.seq < chosen.queue[0]!.seq)) chosen = job;
    }
    return chosen;
  }

  private wakeAt(host: string, state: HostState, at: number, now: number): void {
    if (state.timer) {
      if (state.timerAt <= at) return;
      clearTimeout(state.timer);
    }
    state.timerAt = at;
    state.timer = setTimeout(() => {
      state.timer = null;
      state.timerAt = Infinity;
      this.pump(host, state);
    }, at - now);
  }

  private evictIdle(): void {
    const now = this.now();
    for (const [host, s] of this.hosts) {
      if (s.active !== 0 || s.waiting !== 0 || s.timer !== null || s.nextStartAt > now || s.blockedUntil > now) continue;
      if ([...s.jobs.values()].every((job) => forgettable(job, now))) this.hosts.delete(host);
    }
  }
}

/** Nothing in flight, waiting or promised, and its spacing passed: forgetting the job's state on the host changes nothing. */
function forgettable(job: JobOnHost, now: number): boolean {
  return job.active === 0 && job.queue.length === 0 && job.nextStartAt <= now && job.promisedUntil <= now;
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
    deferAfterMs: read('TRAWL_HOST_DEFER_AFTER_MS', 1_000, 0),
  };
}
