/**
 * Schedule maths, pure. A schedule runs once at `runAt`, or on a cron expression (5 fields, or 6
 * with seconds), or every `intervalMs`; `runAt` with a cadence means "start then, repeat".
 *
 * A cron expression is read as wall-clock time in the schedule's IANA `timeZone` (default UTC):
 * cron-parser's `tz` option computes the slots, daylight-saving changes included, so a daily 09:00
 * in Europe/Berlin is 08:00Z in winter and 07:00Z in summer. Intervals and `runAt` are instants and
 * ignore the zone.
 *
 * Missed slots coalesce: a dispatcher that was down for an hour dispatches the latest missed slot
 * once, not sixty catch-up jobs, then moves on to the first slot in the future.
 */
import { CronExpressionParser } from 'cron-parser';
import { TrawlError } from '@trawl/schemas';

export interface Cadence {
  readonly cron?: string | null;
  readonly intervalMs?: number | null;
  readonly runAt?: Date | null;
  /** IANA time zone the cron expression is read in; null or absent: UTC. */
  readonly timeZone?: string | null;
}

/** A cadence no schedule can run on (a malformed cron, an interval below the minimum): the request is refused. */
export class InvalidCadenceError extends TrawlError {
  readonly code = 'TRAWL_INVALID_CADENCE';
  readonly retriable = false;
}

const MIN_INTERVAL_MS = 1_000;
const MAX_CATCH_UP_STEPS = 100_000;

/** True when `zone` is an IANA time zone name this runtime knows (as `Intl` does). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A time zone this runtime does not know: the request is refused. */
export class InvalidTimeZoneError extends TrawlError {
  readonly code = 'TRAWL_INVALID_TIME_ZONE';
  readonly retriable = false;
}

export function validateTimeZone(zone: string): void {
  if (!isTimeZone(zone)) throw new InvalidTimeZoneError(`time zone "${zone}" is not an IANA time zone name (such as Europe/Berlin or UTC)`);
}

export function validateCron(expr: string): void {
  const fields = expr.trim().split(/\s+/);
  if (fields.length < 5 || fields.length > 6) {
    throw new InvalidCadenceError(`cron "${expr}" must have 5 fields (min hour day month weekday) or 6 (with seconds first)`);
  }
  try {
    CronExpressionParser.parse(expr, { tz: 'UTC', strict: false }).next();
  } catch (err) {
    throw new InvalidCadenceError(`cron "${expr}" is not valid: ${(err as Error).message}`, { cause: err });
  }
}

export function validateCadence(c: Cadence): void {
  if (!c.cron && !c.intervalMs && !c.runAt) throw new InvalidCadenceError('a schedule needs run_at, a cron expression or an interval');
  if (c.cron && c.intervalMs) throw new InvalidCadenceError('give a cron expression or an interval, not both');
  if (c.cron) validateCron(c.cron);
  if (c.timeZone) validateTimeZone(c.timeZone);
  if (c.intervalMs != null && (!Number.isInteger(c.intervalMs) || c.intervalMs < MIN_INTERVAL_MS)) {
    throw new InvalidCadenceError(`interval must be a whole number of ms ≥ ${MIN_INTERVAL_MS}`);
  }
  if (c.runAt && Number.isNaN(c.runAt.getTime())) throw new InvalidCadenceError('run_at is not a valid time');
}

/**
 * Results of cronAfter, by expression and instant. Parsing a cron expression costs about a
 * millisecond (cron-parser with time zones), and a dispatcher tick asks the same question for
 * every schedule of a slot: 10,000 targets on `* * * * *` due the same minute spent seconds here.
 * The answer is pure, so it is remembered (bounded; forgotten all at once when full).
 */
const cronAfterCache = new Map<string, number>();
const CRON_CACHE_MAX = 10_000;

/** The first cron occurrence strictly after `after`, the expression read in `tz`. */
function cronAfter(expr: string, tz: string, after: Date): Date {
  const key = `${after.getTime()} ${tz} ${expr}`;
  const hit = cronAfterCache.get(key);
  if (hit !== undefined) return new Date(hit);
  const next = CronExpressionParser.parse(expr, { tz, currentDate: after }).next().toDate();
  if (cronAfterCache.size >= CRON_CACHE_MAX) cronAfterCache.clear();
  cronAfterCache.set(key, next.getTime());
  return next;
}

function repeatsAfter(c: Cadence, slot: Date): Date | null {
  if (c.cron) return cronAfter(c.cron, c.timeZone || 'UTC', slot);
  if (c.intervalMs) return new Date(slot.getTime() + c.intervalMs);
  return null;
}

/** When a new schedule is first due. */
export function firstDue(c: Cadence, now: Date): Date {
  if (c.runAt) return c.runAt;
  if (c.cron) return cronAfter(c.cron, c.timeZone || 'UTC', now);
  return new Date(now.getTime() + c.intervalMs!);
}

export interface DueSlot {
  /** The slot to dispatch now: the latest one at or before `now`. */
  readonly slot: Date;
  /** The next slot after it (null: a one-shot schedule is done). */
  readonly next: Date | null;
}

/** Given the stored `nextDue` (≤ now), which slot to dispatch and when the schedule is next due. */
export function dueSlot(c: Cadence, nextDue: Date, now: Date): DueSlot {
  let slot = nextDue;
  let next = repeatsAfter(c, slot);
  if (c.intervalMs && next && next <= now) {
    // Jump straight to the latest missed slot: no loop for long outages.
    const missed = Math.floor((now.getTime() - slot.getTime()) / c.intervalMs);
    slot = new Date(slot.getTime() + missed * c.intervalMs);
    next = new Date(slot.getTime() + c.intervalMs);
  }
  for (let i = 0; next && next <= now && i < MAX_CATCH_UP_STEPS; i++) {
    slot = next;
    next = repeatsAfter(c, slot);
  }
  return { slot, next };
}

/** Occurrences of a cron expression looked at to find its shortest gap. */
const GAP_SAMPLE = 200;
const gapCache = new Map<string, number>();

/**
 * The shortest time between two runs of a repeating cadence (undefined for a one-shot): what a
 * minimum-interval quota is checked against. An interval is its own gap. A cron expression's is
 * measured over its next 200 occurrences: exact for whatever repeats within them — a gap under a
 * minute shows in the first minute that matches twice, so a minimum of 60 s is always judged right
 * — and a bound from above for rarer patterns. Remembered per expression (bounded), since the
 * dispatcher asks for every due schedule and iterating a sparse expression costs ~0.5 ms a step.
 */
export function shortestGapMs(c: Cadence, from: Date = new Date()): number | undefined {
  if (c.intervalMs) return c.intervalMs;
  if (!c.cron) return undefined;
  const expr = c.cron.trim();
  const tz = c.timeZone || 'UTC';
  const key = `${tz} ${expr}`;
  const known = gapCache.get(key);
  if (known !== undefined) return known;
  const it = CronExpressionParser.parse(expr, { tz, currentDate: from });
  let previous = it.next().toDate().getTime();
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < GAP_SAMPLE && shortest > 1_000; i++) {
    const next = it.next().toDate().getTime();
    shortest = Math.min(shortest, next - previous);
    previous = next;
  }
  if (gapCache.size >= CRON_CACHE_MAX) gapCache.clear();
  gapCache.set(key, shortest);
  return shortest;
}
