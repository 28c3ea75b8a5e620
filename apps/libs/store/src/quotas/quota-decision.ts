/**
 * Quota decisions, pure: given a user's limits and what they use, may a job start (and with how
 * many pages at most), may a schedule be created, is a cadence frequent enough to be refused.
 *
 * Pages a day is enforced by reservation: a job counts its whole `max_pages` from the moment it
 * starts until it is over, then what it really fetched. A new job gets at most what is left of the
 * day's budget as its `max_pages` — the frontier stops a job at its `max_pages`, so the budget is a
 * hard bound, not a hope — and nothing when nothing is left. The day is the last 24 hours, by the
 * jobs' start times.
 */
import type { QuotaLimits, QuotaName } from './quota-limits.ts';
import type { WebhookQuotaName } from './webhook-quota-limits.ts';

export interface QuotaUsage {
  /** Jobs started and not over. */
  readonly active_jobs: number;
  /** Pages reserved or used by the jobs started in the last 24 hours. */
  readonly pages_today: number;
}

export interface QuotaRefusal {
  readonly ok: false;
  readonly limit: QuotaName | WebhookQuotaName;
  /** The limit's value. */
  readonly value: number;
  /** What the user has of it now. */
  readonly used: number;
  readonly message: string;
  /** When room comes back by itself (an hourly limit): the API's `retry-after`. */
  readonly retryAfterSeconds?: number;
}

export type JobDecision = { readonly ok: true; readonly maxPages: number; readonly capped: boolean } | QuotaRefusal;

/** May a job asking for `wantedPages` start now, and with how many pages at most. */
export function decideJob(limits: QuotaLimits, usage: QuotaUsage, wantedPages: number): JobDecision {
  if (usage.active_jobs >= limits.active_jobs) {
    return {
      ok: false,
      limit: 'active_jobs',
      value: limits.active_jobs,
      used: usage.active_jobs,
      message: `quota active_jobs (${limits.active_jobs}) reached: ${usage.active_jobs} of your jobs are running; wait for one to end`,
    };
  }
  const left = limits.pages_per_day - usage.pages_today;
  if (left <= 0) {
    return {
      ok: false,
      limit: 'pages_per_day',
      value: limits.pages_per_day,
      used: usage.pages_today,
      message: `quota pages_per_day (${limits.pages_per_day}) reached: your jobs of the last 24 hours use or may still use ${usage.pages_today} pages`,
    };
  }
  return wantedPages > left ? { ok: true, maxPages: left, capped: true } : { ok: true, maxPages: wantedPages, capped: false };
}

export type ScheduleDecision = { readonly ok: true } | QuotaRefusal;

export function decideSchedule(limits: QuotaLimits, liveSchedules: number): ScheduleDecision {
  if (liveSchedules < limits.schedules) return { ok: true };
  return {
    ok: false,
    limit: 'schedules',
    value: limits.schedules,
    used: liveSchedules,
    message: `quota schedules (${limits.schedules}) reached: you have ${liveSchedules} active or paused schedules; cancel one first`,
  };
}

/** The refusal of a cadence whose runs come closer than the minimum interval, or undefined. */
export function decideInterval(limits: QuotaLimits, shortestGapMs: number | undefined): QuotaRefusal | undefined {
  if (shortestGapMs === undefined || shortestGapMs >= limits.min_interval_seconds * 1000) return undefined;
  const every = shortestGapMs % 1000 === 0 ? `${shortestGapMs / 1000} s` : `${shortestGapMs} ms`;
  return {
    ok: false,
    limit: 'min_interval_seconds',
    value: limits.min_interval_seconds,
    used: Math.floor(shortestGapMs / 1000),
    message: `interval runs every ${every}: below the minimum schedule interval (min_interval_seconds, ${limits.min_interval_seconds} s)`,
  };
}
