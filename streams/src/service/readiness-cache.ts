/**
 * `/readyz` answered from one recent round of checks. Each round asks every dependency (the
 * API's: Postgres, Kafka, the registry, ClickHouse), and `/readyz` needs no key, so without this
 * a burst of probes was a burst of backend calls: 400 of them raised an authenticated request's
 * latency from 48 ms to 558 ms. Now a round's result is kept for `ttlMs` (TRAWL_READY_CACHE_MS,
 * 2 s by default), and callers that come while a round runs share it (single flight): however
 * many probes arrive, the dependencies see at most one round per `ttlMs` plus its duration.
 *
 * The cost is staleness: a dependency that goes down (or comes back) shows `ttlMs` late, well
 * under any orchestrator's probe period. Failures are kept as long as successes, so a dependency
 * that is down is not hammered by the probes that find it so. `ttlMs` 0 keeps nothing but still
 * shares a round in flight.
 */
import { runChecks, type CheckResult, type ReadinessChecks } from './readiness.ts';

export const DEFAULT_READY_CACHE_MS = 2_000;

export interface ReadinessCacheOptions {
  /** How long a round's result answers `/readyz`, counted from when it finished. */
  readonly ttlMs: number;
  /** Each check's deadline (runChecks'). */
  readonly timeoutMs?: number;
  readonly now?: () => number;
  /** How a round runs; runChecks by default (tests count rounds with it). */
  readonly run?: (checks: ReadinessChecks, timeoutMs?: number) => Promise<Record<string, CheckResult>>;
}

export class ReadinessCache {
  private last: { readonly at: number; readonly results: Record<string, CheckResult> } | undefined;
  private inFlight: Promise<Record<string, CheckResult>> | undefined;
  private readonly now: () => number;
  private readonly run: NonNullable<ReadinessCacheOptions['run']>;

  /**
   * `checks` is read when a round starts (a service's checks exist once it has started; the
   * operator port runs no round before that).
   */
  constructor(
    private readonly checks: () => ReadinessChecks,
    private readonly options: ReadinessCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.run = options.run ?? runChecks;
  }

  /**
   * The latest round's results when fresh (or, with `stale`, whatever their age), else the round
   * in flight, else a new round.
   */
  results(options: { readonly stale?: boolean } = {}): Promise<Record<string, CheckResult>> {
    if (this.last && (options.stale || this.now() - this.last.at < this.options.ttlMs)) return Promise.resolve(this.last.results);
    if (this.inFlight) return this.inFlight;
    const round = this.run(this.checks(), this.options.timeoutMs)
      .then((results) => {
        this.last = { at: this.now(), results };
        return results;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    this.inFlight = round;
    return round;
  }
}

/** TRAWL_READY_CACHE_MS: how long a readiness round answers `/readyz` (default 2 000; 0 keeps nothing). */
export function readyCacheMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_READY_CACHE_MS;
  if (raw === undefined || raw === '') return DEFAULT_READY_CACHE_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`TRAWL_READY_CACHE_MS must be an integer ≥ 0 (milliseconds), got "${raw}"`);
  return ms;
}
