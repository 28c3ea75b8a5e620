import { firstDue, type Schedule } from '@trawl/store';

/** The next `count` slots of an active schedule (same maths as the dispatcher's), for display. */
export function nextRuns(s: Pick<Schedule, 'status' | 'next_due' | 'cron' | 'interval_ms' | 'time_zone'>, count = 5): Date[] {
  if (s.status !== 'active' || !s.next_due) return [];
  const out = [s.next_due];
  if (!s.cron && !s.interval_ms) return out;
  const repeat = { cron: s.cron, intervalMs: s.interval_ms, timeZone: s.time_zone };
  while (out.length < count) out.push(firstDue(repeat, out[out.length - 1]!));
  return out;
}
