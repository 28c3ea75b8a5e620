/**
 * `interval` of `POST /crawl`: a cron expression (5 fields, or 6 with seconds first; read in the
 * schedule's `time_zone`, UTC by default), or a plain duration such as `30s`, `15m`, `2h`, `1d`
 * for "every so often" without cron's wall-clock alignment. Cron fields always contain spaces, so the two forms cannot be confused.
 */
import { InvalidCadenceError, isTimeZone, validateCron, type Cadence } from '@trawl/store';
import { ApiError } from '../errors.ts';

const DURATION = /^(\d{1,9})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The cadence part of an interval; throws INVALID_CRON (field `interval`) when it is neither form. */
export function parseInterval(interval: string): Pick<Cadence, 'cron' | 'intervalMs'> {
  const trimmed = interval.trim();
  const duration = DURATION.exec(trimmed);
  if (duration) {
    const ms = Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS];
    if (ms < 1_000) throw new ApiError('INVALID_CRON', 'interval must be at least 1s', { field: 'interval' });
    return { cron: null, intervalMs: ms };
  }
  try {
    validateCron(trimmed);
  } catch (err) {
    if (err instanceof InvalidCadenceError) throw new ApiError('INVALID_CRON', err.message, { field: 'interval', cause: err });
    throw err;
  }
  return { cron: trimmed, intervalMs: null };
}

/** `time_zone` of a schedule: an IANA name; throws INVALID_TIME_ZONE (field `time_zone`) otherwise. */
export function parseTimeZone(zone: string): string {
  if (!isTimeZone(zone)) throw new ApiError('INVALID_TIME_ZONE', `time zone "${zone}" is not an IANA time zone name (such as Europe/Berlin or UTC)`, { field: 'time_zone' });
  return zone;
}
