/**
 * Adaptive throttling per host and job (CrawlSpec.adaptive_throttle), after Scrapy's AutoThrottle:
 * a server that needs `latency` to answer is sent a request every `latency / N` to have N in
 * flight, so each answer moves the delay to the average of the old delay and `latency / N`, rising
 * at once when the target is above it (Scrapy's `max(target, average)`), and an error never lowers it.
 *
 * AutoThrottle's N is a fixed setting; here it is the job's concurrency on the host, found the way
 * TCP finds a window, because the best N depends on the site and the user only says the most they
 * allow (`host_concurrency`):
 *  - slow start: from `startConcurrency`, one more per success (doubling per round trip) while
 *    answers take under 3× the least latency seen; past that, requests queue at the site and more
 *    in flight gains little;
 *  - then one more every `probeAfter` successes, but only while the limit binds (the fetches in
 *    flight reach it, within one): a limit not reached says nothing about the site;
 *  - an error (429, 5xx, a timeout, a block) lowers the concurrency below what was in flight
 *    (by a tenth, at least one) and doubles the delay; that level becomes the ceiling, tried again
 *    only after `ceilingProbeAfter` successes, twice as many after each failure there (up to
 *    `maxProbeAfter`), so a site's limit costs ever rarer errors while a limit that rises is still
 *    found. Only the first error of an episode counts: fetches sent before the last decrease were
 *    sent at the old rate and say nothing new.
 *
 * Bounds are never crossed: the concurrency stays within [1, host_concurrency] (the limiter then
 * caps it by the operator's TRAWL_HOST_MAX_CONCURRENCY), the delay within [max(host_delay_ms,
 * robots Crawl-delay), maxDelayMs].
 */
import type { HostPolicy } from './host-limiter.ts';
import { envInteger } from '../config/env-integer.ts';

export interface ThrottleBounds {
  /** The job's host_concurrency: the most in flight the throttle may choose. */
  readonly maxConcurrency: number;
  /** The least delay: the job's host_delay_ms and robots.txt's Crawl-delay, whichever is more. */
  readonly minDelayMs: number;
}

/** How a fetch ended, for the throttle. */
export type ThrottleOutcome =
  /** An answer that says nothing bad about the load (2xx/3xx, and 404s and the like). */
  | 'ok'
  /** A 4xx other than 429: the delay may rise with its latency, never fall. */
  | 'neutral'
  /** 429, 5xx, a timeout or a network error, a block page: back off. */
  | 'error';

export interface AutoThrottleOptions {
  /** Delay before the first answer (TRAWL_AUTOTHROTTLE_START_DELAY_MS, default 0: the slow start paces the first requests). */
  readonly startDelayMs?: number;
  /** The longest delay it may choose (TRAWL_AUTOTHROTTLE_MAX_DELAY_MS, default 60 s). */
  readonly maxDelayMs?: number;
  /** Concurrency before the first answer (TRAWL_AUTOTHROTTLE_START_CONCURRENCY, default 1). */
  readonly startConcurrency?: number;
  /** Successes between two steps of one more in flight after the slow start (default 4). */
  readonly probeAfter?: number;
  /** Successes before the level that last failed is tried again (default 128), doubling with each failure there. */
  readonly ceilingProbeAfter?: number;
  /** The most that grows to (default 1024). */
  readonly maxProbeAfter?: number;
  /** (host, job) states kept; the least recently used is dropped past it. */
  readonly maxEntries?: number;
}

interface Entry {
  host: string;
  jobId: string;
  delayMs: number;
  concurrency: number;
  /** Growing by one per success until the first error. */
  slowStart: boolean;
  successes: number;
  /** The least latency of a success: the site's answer time without queueing. */
  minLatencyMs: number;
  /** The concurrency at which the last error came, and how many times in a row it failed there. */
  ceiling: number;
  ceilingFailures: number;
  /** When the concurrency last dropped (performance.now()): errors of fetches started before it are of the same episode. */
  lastDecreaseAt: number;
  bounds: ThrottleBounds;
  errors: number;
  /** Last asked or told (Date.now()): what is reported is what steers a crawl now. */
  usedAt: number;
}

/** One (host, job)'s current choice, for metrics and the job log. */
export interface ThrottleChoice {
  readonly host: string;
  readonly jobId: string;
  readonly delayMs: number;
  readonly concurrency: number;
  readonly errors: number;
}

export class AutoThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly startDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly startConcurrency: number;
  private readonly probeAfter: number;
  private readonly ceilingProbeAfter: number;
  private readonly maxProbeAfter: number;
  private readonly maxEntries: number;

  constructor(options: AutoThrottleOptions = {}) {
    this.startDelayMs = options.startDelayMs ?? 0;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.startConcurrency = Math.max(1, options.startConcurrency ?? 1);
    this.probeAfter = Math.max(1, options.probeAfter ?? 4);
    this.ceilingProbeAfter = Math.max(1, options.ceilingProbeAfter ?? 128);
    this.maxProbeAfter = Math.max(this.ceilingProbeAfter, options.maxProbeAfter ?? 1024);
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** The policy the host limiter applies to the job's next fetch on the host: the chosen concurrency and delay, within the bounds. */
  policy(host: string, jobId: string, bounds: ThrottleBounds): HostPolicy {
    const e = this.entryOf(host, jobId, bounds);
    // Above the job's own spacing the delay is the throttle's pacing: it waits like a slot, never deferred for the queue (host-limiter.ts).
    return { maxConcurrency: e.concurrency, minDelayMs: Math.round(e.delayMs), paced: e.delayMs > e.bounds.minDelayMs };
  }

  /**
   * One fetch ended: `startedAt` when it was sent (performance.now()), `latencyMs` how long its
   * answer took (for an error, what it took to fail), `inFlight` the job's fetches on the host
   * in flight when it ended, itself included (default: as many as allowed).
   */
  observe(host: string, jobId: string, bounds: ThrottleBounds, outcome: ThrottleOutcome, startedAt: number, latencyMs: number, now: number = performance.now(), inFlight?: number): void {
    const e = this.entryOf(host, jobId, bounds);
    // What was really in flight (this fetch included): a limit that is not reached says nothing, and is not raised.
    const used = Math.max(1, Math.min(e.concurrency, inFlight ?? e.concurrency));
    const latency = Math.max(0, latencyMs);
    const target = latency / e.concurrency;
    if (outcome === 'error') {
      e.errors++;
      // Sent at the rate already given up: the same episode, already answered.
      if (startedAt < e.lastDecreaseAt) return;
      e.slowStart = false;
      // The level that failed is the ceiling; failing there again makes it be probed ever more rarely.
      if (used === e.ceiling) e.ceilingFailures++;
      else {
        e.ceiling = used;
        e.ceilingFailures = 1;
      }
      e.concurrency = Math.max(1, used - Math.max(1, Math.floor(used / 10)));
      e.successes = 0;
      e.lastDecreaseAt = now;
      e.delayMs = this.clampDelay(Math.max(e.delayMs * 2, target, e.delayMs + 10), e.bounds);
      return;
    }
    // AutoThrottle: the average of the old delay and latency / N, up to the target at once; never down on a non-2xx.
    const next = Math.max(target, (e.delayMs + target) / 2);
    if (outcome === 'ok' || next > e.delayMs) e.delayMs = this.clampDelay(next, e.bounds);
    if (outcome !== 'ok') return;
    e.minLatencyMs = Math.min(e.minLatencyMs, latency);
    // Paced at latency / N, the fetches in flight hover just under the limit: within one of it, the limit binds.
    if (used < e.concurrency - 1) return;
    if (e.slowStart) {
      // Latency twice the least seen: requests queue at the site, more in flight gains little.
      if (latency < 3 * e.minLatencyMs) e.concurrency++;
      else e.slowStart = false;
    } else {
      e.successes++;
      // One more in flight after `probeAfter` successes; at the level that failed, after ever more.
      const need = e.concurrency + 1 >= e.ceiling ? Math.min(this.ceilingProbeAfter * 2 ** (e.ceilingFailures - 1), this.maxProbeAfter) : this.probeAfter;
      if (e.successes >= need) {
        e.concurrency++;
        e.successes = 0;
      }
    }
    e.concurrency = Math.min(e.concurrency, e.bounds.maxConcurrency);
  }

  /** Every (host, job) the throttle steered within `withinMs`, least recently first. */
  choices(withinMs = 5 * 60_000): ThrottleChoice[] {
    const since = Date.now() - withinMs;
    return [...this.entries.values()].filter((e) => e.usedAt >= since).map((e) => ({ host: e.host, jobId: e.jobId, delayMs: Math.round(e.delayMs), concurrency: e.concurrency, errors: e.errors }));
  }

  /** One (host, job)'s choice, or null when it has none. */
  choice(host: string, jobId: string): ThrottleChoice | null {
    const e = this.entries.get(key(host, jobId));
    return e ? { host, jobId, delayMs: Math.round(e.delayMs), concurrency: e.concurrency, errors: e.errors } : null;
  }

  /** Forgets a job's states (it ended). */
  forgetJob(jobId: string): void {
    for (const [k, e] of this.entries) if (e.jobId === jobId) this.entries.delete(k);
  }

  private entryOf(host: string, jobId: string, bounds: ThrottleBounds): Entry {
    const k = key(host, jobId);
    let e = this.entries.get(k);
    if (e) this.entries.delete(k);
    else {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      e = { host, jobId, delayMs: 0, concurrency: this.startConcurrency, slowStart: true, successes: 0, minLatencyMs: Infinity, ceiling: Infinity, ceilingFailures: 0, lastDecreaseAt: -Infinity, bounds, errors: 0, usedAt: 0 };
      e.delayMs = this.clampDelay(this.startDelayMs, bounds);
    }
    this.entries.set(k, e);
    e.usedAt = Date.now();
    // The bounds may move (a Crawl-delay read later): the choice follows them at once.
    e.bounds = { maxConcurrency: Math.max(1, bounds.maxConcurrency), minDelayMs: Math.max(0, bounds.minDelayMs) };
    e.concurrency = Math.max(1, Math.min(e.concurrency, e.bounds.maxConcurrency));
    e.delayMs = this.clampDelay(e.delayMs, e.bounds);
    return e;
  }

  private clampDelay(ms: number, bounds: ThrottleBounds): number {
    return Math.min(Math.max(ms, bounds.minDelayMs), Math.max(this.maxDelayMs, bounds.minDelayMs));
  }
}

function key(host: string, jobId: string): string {
  return `${host}\u0000${jobId}`;
}

/** The throttle's bounds for a job on a host: its host_concurrency (the limiter's default when 0) and the larger of host_delay_ms and Crawl-delay. */
export function throttleBoundsOf(spec: { readonly host_concurrency: number; readonly host_delay_ms: number }, crawlDelayMs: number | null, defaultConcurrency: number): ThrottleBounds {
  return {
    maxConcurrency: spec.host_concurrency > 0 ? spec.host_concurrency : defaultConcurrency,
    minDelayMs: Math.max(0, spec.host_delay_ms, crawlDelayMs ?? 0),
  };
}

/** The throttle's settings from the environment (TRAWL_AUTOTHROTTLE_*). */
export function autoThrottleOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): AutoThrottleOptions {
  return {
    startDelayMs: envInteger(env, 'TRAWL_AUTOTHROTTLE_START_DELAY_MS', 0, 0),
    maxDelayMs: envInteger(env, 'TRAWL_AUTOTHROTTLE_MAX_DELAY_MS', 60_000, 0),
    startConcurrency: envInteger(env, 'TRAWL_AUTOTHROTTLE_START_CONCURRENCY', 1, 1),
  };
}
