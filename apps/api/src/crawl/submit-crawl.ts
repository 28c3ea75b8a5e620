/**
 * `POST /crawl`: an immediate crawl (deduplicated per user) or a schedule for the dispatcher.
 *
 * Dedupe, and why the job id is random. One row per (user, dedupe key) holds the job id and its
 * expiry. `INSERT … ON CONFLICT DO UPDATE … WHERE expired OR ignore_cache` makes Postgres the
 * arbiter: concurrent identical requests queue on the row lock of the first, then see its
 * committed row and return its job. The job id is a random UUID stored in that row rather than a
 * UUIDv5 of (dedupe key, time bucket): a bucket would split two requests a millisecond apart
 * across a boundary into two jobs, could never agree with a TTL that starts at the first request,
 * and `ignore_cache` needs a fresh id anyway. Determinism buys nothing here because the row, not
 * the id, is what makes concurrent requests agree.
 *
 * Order of effects, as in the dispatcher: the events are acknowledged by Kafka *before* the
 * transaction holding the dedupe row commits. A Kafka failure rolls the row back (the client gets
 * 503 and may retry); a crash after the acknowledgement but before the commit leaves a job without
 * a dedupe row, which costs at worst one duplicate crawl, never a cached job that never runs. The
 * lock is held for one produce round trip (a few ms), which is what serialises identical requests.
 *
 * Quotas (apps/store quotas/): a new job takes the user's quota lock, must fit the active jobs,
 * and gets at most what is left of the day's pages as its `max_pages` (the answer says how many);
 * it is written to the quota ledger in the same transaction. A cached answer starts nothing and
 * costs no quota. A schedule must fit the user's number of schedules and minimum interval.
 */
import { randomUUID } from 'node:crypto';
import type { EventProducer } from '@trawl/streams';
import { eventId } from '@trawl/streams';
import {
  admitJob,
  crawlSpec,
  createScheduleWithinQuota,
  getWebsite,
  inTransaction,
  recordJobs,
  type CrawlRequest,
  type Pool,
  type QuotaLimits,
  type Website,
} from '@trawl/store';
import { jobIdForSlot } from '@trawl/dispatcher';
import { ApiError } from '../errors.ts';
import { checkPatterns } from './check-patterns.ts';
import { dedupeKey } from './dedupe-key.ts';
import { parseInterval } from './interval.ts';

export interface CrawlBody {
  readonly spider?: string;
  readonly start_urls: readonly string[];
  readonly depth: number;
  readonly max_pages?: number;
  readonly schedule_at?: string;
  readonly interval?: string;
  readonly ignore_cache?: boolean;
  readonly params?: Readonly<Record<string, string>>;
}

export type CrawlOutcome =
  | { readonly scheduled: false; readonly job_id: string; readonly cached: boolean; readonly cached_at?: Date; readonly max_pages?: number }
  | { readonly scheduled: true; readonly schedule_id: string; readonly next_run: Date; readonly job_id?: string };

export type EventEmitter = Pick<EventProducer, 'emit'>;

export interface CrawlServiceOptions {
  readonly pool: Pool;
  readonly producer: EventEmitter;
  readonly dedupeTtlSeconds: number;
  /** Every user's quotas unless `user_quotas` says otherwise. */
  readonly quotas: QuotaLimits;
  readonly now?: () => Date;
}

/** How far in the past `schedule_at` may lie (clock skew, slow clients) before it is refused. */
const SCHEDULE_PAST_TOLERANCE_MS = 60_000;

export class CrawlService {
  private readonly now: () => Date;

  constructor(private readonly options: CrawlServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async submit(userId: string, body: CrawlBody): Promise<CrawlOutcome> {
    const website = await this.spider(userId, body.spider);
    const request: CrawlRequest = {
      spider: body.spider ?? null,
      start_urls: [...new Set(body.start_urls)],
      depth: body.depth,
      max_pages: body.max_pages ?? null,
      params: body.params ?? {},
    };
    if (body.schedule_at !== undefined || body.interval !== undefined) return this.schedule(userId, request, body);
    return this.crawlNow(userId, request, website, body.ignore_cache ?? false);
  }

  private async spider(userId: string, spider: string | undefined): Promise<Website | null> {
    if (spider === undefined) return null;
    const website = await getWebsite(this.options.pool, spider);
    if (!website || (website.owner_id !== null && website.owner_id !== userId)) {
      throw new ApiError('UNKNOWN_SPIDER', `spider "${spider}" is not a website you can use`, { field: 'spider' });
    }
    // A website saved before patterns ran in the linear-time engine may hold one it refuses.
    try {
      checkPatterns(website);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      throw new ApiError(err.code, `spider "${spider}": ${err.message}; change the website's patterns first`, { field: 'spider', cause: err });
    }
    return website;
  }

  private async schedule(userId: string, request: CrawlRequest, body: CrawlBody): Promise<CrawlOutcome> {
    const now = this.now();
    const runAt = body.schedule_at === undefined ? null : new Date(body.schedule_at);
    if (runAt && runAt.getTime() < now.getTime() - SCHEDULE_PAST_TOLERANCE_MS) {
      throw new ApiError('SCHEDULE_IN_PAST', `schedule_at ${body.schedule_at} is in the past`, { field: 'schedule_at' });
    }
    const repeat = body.interval === undefined ? { cron: null, intervalMs: null } : parseInterval(body.interval);
    const id = randomUUID();
    const schedule = await createScheduleWithinQuota(this.options.pool, { id, owner_id: userId, request, cadence: { runAt, ...repeat } }, this.options.quotas, now);
    const oneShot = runAt !== null && !repeat.cron && !repeat.intervalMs;
    return {
      scheduled: true,
      schedule_id: schedule.id,
      next_run: schedule.next_due!,
      // A one-shot schedule's job id is known now: the dispatcher derives it from the slot.
      ...(oneShot ? { job_id: jobIdForSlot(schedule.id, runAt) } : {}),
    };
  }

  private async crawlNow(userId: string, request: CrawlRequest, website: Website | null, ignoreCache: boolean): Promise<CrawlOutcome> {
    const key = dedupeKey(request);
    const proposed = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const outcome = await inTransaction(this.options.pool, async (tx) => {
        const claimed = await tx.query<{ job_id: string; created_at: Date }>(
          `INSERT INTO crawl_dedupe (user_id, dedupe_key, job_id, created_at, expires_at)
           VALUES ($1, $2, $3, now(), now() + make_interval(secs => $4))
           ON CONFLICT (user_id, dedupe_key) DO UPDATE
             SET job_id = EXCLUDED.job_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
             WHERE crawl_dedupe.expires_at <= now() OR $5::boolean
           RETURNING job_id, created_at`,
          [userId, key, proposed, this.options.dedupeTtlSeconds, ignoreCache],
        );
        if (claimed.rows.length === 0) {
          // An unexpired row exists (possibly committed by a concurrent twin a moment ago).
          const existing = await tx.query<{ job_id: string; created_at: Date }>(
            'SELECT job_id, created_at FROM crawl_dedupe WHERE user_id = $1 AND dedupe_key = $2',
            [userId, key],
          );
          const row = existing.rows[0];
          return row ? ({ scheduled: false, job_id: row.job_id, cached: true, cached_at: row.created_at } as const) : undefined;
        }
        // A new job: within the user's quotas (refused, the dedupe claim rolls back with the rest).
        const wanted = crawlSpec(website, { depth: request.depth, max_pages: request.max_pages }).max_pages;
        const { maxPages } = await admitJob(tx, userId, this.options.quotas, wanted, this.now());
        await tx.query('INSERT INTO api_jobs (job_id, user_id, dedupe_key, request) VALUES ($1, $2, $3, $4)', [
          proposed,
          userId,
          key,
          JSON.stringify(request),
        ]);
        await this.emit(proposed, userId, request, website, key, ignoreCache, maxPages);
        await recordJobs(tx, [{ job_id: proposed, user_id: userId, max_pages: maxPages }]);
        return { scheduled: false, job_id: proposed, cached: false, max_pages: maxPages } as const;
      });
      if (outcome) return outcome;
      // The row vanished between INSERT and SELECT (an expiry purge): claim again.
      if (attempt >= 2) throw new ApiError('DEPENDENCY_UNAVAILABLE', 'dedupe row kept changing; retry');
    }
  }

  private async emit(jobId: string, userId: string, request: CrawlRequest, website: Website | null, key: string, ignoreCache: boolean, maxPages: number): Promise<void> {
    const requestedId = eventId('CrawlRequested', jobId);
    try {
      // Both go out in the producer's same batch; same key, so JobDispatched follows CrawlRequested.
      await Promise.all([
        this.options.producer.emit(
          'CrawlRequested',
          { job_id: jobId, user_id: userId, spider: request.spider, start_urls: request.start_urls, depth: request.depth,
            max_pages: request.max_pages, params: request.params, dedupe_key: key, ignore_cache: ignoreCache },
          { eventId: requestedId, key: jobId },
        ),
        this.options.producer.emit(
          'JobDispatched',
          { job_id: jobId, user_id: userId, target_id: null, schedule_id: null, search_url: request.start_urls[0]!,
            start_urls: request.start_urls, keywords: [], location: null,
            spec: crawlSpec(website, { depth: request.depth, max_pages: maxPages }), attempt: 1 },
          { eventId: eventId('JobDispatched', jobId), causationId: requestedId, key: jobId },
        ),
      ]);
    } catch (err) {
      throw new ApiError('DEPENDENCY_UNAVAILABLE', 'could not publish the crawl to Kafka; nothing was created, retry later', { cause: err });
    }
  }
}

/** Drops dedupe rows that expired long ago; live rows and recent ones are untouched. */
export async function purgeExpiredDedupe(pool: Pool, olderThanSeconds = 86_400): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM crawl_dedupe WHERE expires_at < now() - make_interval(secs => $1)', [olderThanSeconds]);
  return rowCount ?? 0;
}
