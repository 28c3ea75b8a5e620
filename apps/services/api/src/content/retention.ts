/**
 * How long a job's stored content is kept, a pure rule shared by `POST /crawl` (what may be asked)
 * and the sweep that enforces it (retention-sweep.ts, whose SQL applies the same rule):
 *
 * - a job keeps its content for the `content_retention` its own request names, else the one its
 *   schedule's request names (every run of a schedule keeps what the schedule says, now), else the
 *   server's default (`TRAWL_CONTENT_RETENTION_SECONDS`, 30 days);
 * - never longer than the server's maximum (`TRAWL_CONTENT_RETENTION_MAX_SECONDS`, 90 days): a
 *   request asking more is refused, and a maximum lowered later shortens what jobs asked before;
 * - counted from the job's end (finished, failed or cancelled): a running job's content is never
 *   swept.
 */
import { ApiError } from '../errors.ts';

export interface ContentRetentionConfig {
  /** A job that names no `content_retention` keeps its content this long (`TRAWL_CONTENT_RETENTION_SECONDS`). */
  readonly defaultSeconds: number;
  /** The longest a job may ask for, and the longest any job keeps it (`TRAWL_CONTENT_RETENTION_MAX_SECONDS`). */
  readonly maxSeconds: number;
  /** How often expired jobs' content is looked for; 0: never, by this instance (`TRAWL_CONTENT_SWEEP_MS`). */
  readonly sweepMs: number;
}

export function retentionSeconds(asked: number | null | undefined, config: Pick<ContentRetentionConfig, 'defaultSeconds' | 'maxSeconds'>): number {
  return Math.min(asked ?? config.defaultSeconds, config.maxSeconds);
}

/** When a job that ended at `endedAt` loses its content; null while it runs. */
export function contentExpiresAt(endedAt: Date | null, seconds: number): Date | null {
  return endedAt === null ? null : new Date(endedAt.getTime() + seconds * 1000);
}

/** Refuses a `content_retention` past the maximum (RETENTION_TOO_LONG, naming it). */
export function checkRetention(asked: number | null | undefined, maxSeconds: number): void {
  if (asked === null || asked === undefined || asked <= maxSeconds) return;
  throw new ApiError('RETENTION_TOO_LONG', `content_retention ${asked} s is longer than this server keeps content (${maxSeconds} s)`, {
    field: 'content_retention',
    limit: { name: 'content_retention_max_seconds', value: maxSeconds, used: asked },
  });
}
