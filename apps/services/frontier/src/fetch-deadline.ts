/**
 * How long a running job may go without any outcome before the frontier declares what it still
 * waits for lost (TRAWL_FETCH_DEADLINE), and how often it looks.
 *
 * The silence a healthy job can show is bounded by the retry path of its slowest fetch: every tier's
 * delay, plus a fetch timeout per attempt (TRAWL_FETCH_RETRY_DELAYS_MS and TRAWL_FETCH_TIMEOUT_MS,
 * the worker's settings, read here from the same environment). A deadline at or under that path
 * would declare fetches lost that are merely being retried, so it is refused at start. The default is
 * an hour, or twice that path when it is longer (tiers of hours): well above the last tier, and with
 * room for a host's queue behind politeness that the path does not count.
 */
import { InvalidOptionError } from '@trawl/streams';

export interface FetchDeadline {
  readonly deadlineMs: number;
  /** How often the sweeper looks for silent jobs: a tenth of the deadline, within 1 s … 60 s. */
  readonly sweepEveryMs: number;
  /** The longest a fetch may take from its request to its last attempt's end (see above). */
  readonly retryPathMs: number;
}

const HOUR_MS = 60 * 60 * 1000;
const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: HOUR_MS };

/** A duration: a number of ms, or with a unit (`500ms`, `90s`, `30m`, `2h`). */
export function parseDuration(name: string, raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(raw);
  if (!m) throw new InvalidOptionError(`${name} must be a duration such as 90s, 30m, 2h or a number of ms, got "${raw}"`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!);
}

export function fetchDeadline(retryDelaysMs: readonly number[], env: NodeJS.ProcessEnv = process.env): FetchDeadline {
  const timeoutRaw = env.TRAWL_FETCH_TIMEOUT_MS;
  const fetchTimeoutMs = timeoutRaw === undefined || timeoutRaw === '' ? DEFAULT_FETCH_TIMEOUT_MS : parseDuration('TRAWL_FETCH_TIMEOUT_MS', timeoutRaw);
  const retryPathMs = retryDelaysMs.reduce((a, b) => a + b, 0) + (retryDelaysMs.length + 1) * fetchTimeoutMs;
  const raw = env.TRAWL_FETCH_DEADLINE;
  const deadlineMs = raw === undefined || raw === '' ? Math.max(HOUR_MS, 2 * retryPathMs) : parseDuration('TRAWL_FETCH_DEADLINE', raw);
  if (deadlineMs <= retryPathMs) {
    throw new InvalidOptionError(
      `TRAWL_FETCH_DEADLINE (${deadlineMs} ms) must exceed a fetch's longest retry path, ${retryPathMs} ms ` +
        `(retry delays ${retryDelaysMs.join('+')} ms + ${retryDelaysMs.length + 1} attempts × TRAWL_FETCH_TIMEOUT_MS ${fetchTimeoutMs} ms): ` +
        'a fetch still being retried would be declared lost',
    );
  }
  return { deadlineMs, retryPathMs, sweepEveryMs: Math.min(60_000, Math.max(1_000, Math.round(deadlineMs / 10))) };
}
