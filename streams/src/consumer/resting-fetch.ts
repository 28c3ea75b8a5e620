/**
 * A fetch that rests while its partitions are empty: the longest wait at the broker lengthens with
 * the time nothing came, and snaps back to the consumer's own wait as soon as a batch arrives.
 *
 * Why: an idle consumer fetches once per `maxWaitTimeInMs` for ever — 20 fetches a second for a
 * projection (50 ms), 2 for a worker (500 ms) — and each costs the client a request, a decoded
 * response and a batch per partition, and the broker a request and a delayed-fetch operation. Ten
 * services hold some twenty such consumers: a stack that did nothing spent a quarter of a core,
 * and the broker more than a tenth (apps/harness/bench, `npm run bench:idle`).
 *
 * Why new work is not late: a fetch waits at the broker for `minBytes` *or* the wait, whichever
 * comes first. While resting the fetch asks for 1 byte, so a record produced to a fetched
 * partition is answered at once, however long the wait — sooner than a busy projection's fetch,
 * which waits for 64 KiB. What a long wait does delay is what takes effect only at the next fetch
 * request: a resumed partition, a seek, a rebalance (kafkajs heartbeats between fetches). So the
 * fetch stays at its busy pace while work is running (`hold`) and after a seek or an assignment, a
 * rest ends no later than a paused partition's resume (a retry falling due), and it is capped below
 * the session timeout.
 *
 * The rule: busy for `restAfterMs` after the last batch, then a wait of a quarter of the quiet
 * time so far (never below the busy wait), up to `restMaxMs` — the fetch rate falls as the quiet
 * lasts, and a stack that works in bursts keeps its pace between them.
 *
 * How kafkajs takes it: its consumer group keeps `maxWaitTimeInMs` and `minBytes` as given and
 * reads them at each fetch — into the request with `Buffer#writeInt32BE` (`+value`), into the
 * request's timeout and into its sleep without partitions by arithmetic — so an object whose
 * `valueOf()` answers the current figure is read afresh each time (kafkajs 2.2.4, which the fast
 * paths pin; resting-fetch.test.ts holds the encoding to it). FlowMinBytes works the same way.
 */
import { InvalidOptionError } from '../errors.ts';

export interface RestingFetchOptions {
  /** The consumer's own wait, kept while work flows. */
  readonly busyWaitMs: number;
  /** The busy fetch's minimum bytes (a number or a FlowMinBytes); 1 while resting. */
  readonly minBytes: number | { valueOf(): number };
  /** The longest rest; 0: never rest (the busy wait always). */
  readonly restMaxMs: number;
  /** Quiet time after the last batch before the wait lengthens. */
  readonly restAfterMs: number;
  /** While true the fetch keeps its busy pace (running work, whose end may lift backpressure). */
  readonly hold?: () => boolean;
  /** How soon a paused partition may resume (PauseControl#resumesWithinMs): no wait lasts longer. */
  readonly resumesWithinMs?: () => number | undefined;
  readonly now?: () => number;
}

/** The share of the quiet time so far that the next wait lasts. */
const REST_SHARE = 0.25;

export class RestingFetch {
  private lastWorkAt: number;
  private readonly now: () => number;
  /** What kafkajs is given as `maxWaitTimeInMs`: read at each fetch. */
  readonly maxWaitTimeInMs: { valueOf(): number; toJSON(): string };
  /** What kafkajs is given as `minBytes`: read at each fetch. */
  readonly minBytes: { valueOf(): number; toJSON(): string };

  constructor(private readonly options: RestingFetchOptions) {
    this.now = options.now ?? (() => performance.now());
    this.lastWorkAt = this.now();
    this.maxWaitTimeInMs = { valueOf: () => this.waitMs(), toJSON: () => `${options.busyWaitMs} ms, resting up to ${options.restMaxMs} ms` };
    this.minBytes = { valueOf: () => this.currentMinBytes(), toJSON: () => `${+options.minBytes} B, 1 while resting` };
  }

  /** A batch arrived (or a seek, an assignment): back to the busy pace. */
  wake(): void {
    this.lastWorkAt = this.now();
  }

  /** Whether the next fetch rests (waits longer than the busy wait, for any byte). */
  resting(): boolean {
    const { restMaxMs, restAfterMs, busyWaitMs, hold } = this.options;
    if (restMaxMs <= busyWaitMs) return false;
    if (hold?.()) {
      this.lastWorkAt = this.now();
      return false;
    }
    return this.now() - this.lastWorkAt >= restAfterMs;
  }

  waitMs(): number {
    const { restMaxMs, busyWaitMs, resumesWithinMs } = this.options;
    if (!this.resting()) return busyWaitMs;
    const resume = resumesWithinMs?.() ?? Infinity;
    return Math.round(Math.max(busyWaitMs, Math.min(restMaxMs, (this.now() - this.lastWorkAt) * REST_SHARE, resume)));
  }

  currentMinBytes(): number {
    return this.resting() ? 1 : +this.options.minBytes;
  }
}

export interface RestSettings {
  /** TRAWL_FETCH_REST_MAX_MS: the longest rest of an idle consumer's fetch; 0 turns resting off. */
  readonly restMaxMs: number;
  /** TRAWL_FETCH_REST_AFTER_MS: quiet time before a fetch begins to rest. */
  readonly restAfterMs: number;
}

export const REST_DEFAULTS: RestSettings = { restMaxMs: 5_000, restAfterMs: 2_000 };

/**
 * The rest settings from the environment, with the longest rest capped at a quarter of the
 * session timeout: kafkajs heartbeats between fetches, and a member must beat well within it.
 */
export function restSettings(sessionTimeoutMs: number, env: NodeJS.ProcessEnv = process.env): RestSettings {
  const read = (name: string, dflt: number) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return dflt;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 0) throw new InvalidOptionError(`${name} must be a whole number of milliseconds ≥ 0, got "${raw}"`);
    return n;
  };
  const restMaxMs = Math.min(read('TRAWL_FETCH_REST_MAX_MS', REST_DEFAULTS.restMaxMs), Math.floor(sessionTimeoutMs / 4));
  return { restMaxMs, restAfterMs: read('TRAWL_FETCH_REST_AFTER_MS', REST_DEFAULTS.restAfterMs) };
}
