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
 * row lock is held for one produce round trip (a few ms), which is what serialises identical requests.
 *
 * Quotas (apps/libs/store quotas/): a new job must fit the active jobs, and gets at most what is left
 * of the day's pages as its `max_pages` (the answer says how many). The decision is a reservation
 * (quota-reservation.ts) committed before the job's transaction: the user's quota lock is held for
 * the decision alone, so one user's admissions no longer queue behind each other's produce. The
 * job's transaction confirms the reservation as it commits; a job that does not start (Kafka
 * refused, a cached answer) releases it, and one lost in between lapses within minutes. A cached
 * answer starts nothing and costs no quota (a user at a limit still gets one). A schedule must fit
 * the user's number of schedules and minimum interval.
 */
import { randomUUID } from 'node:crypto';
import type { EventProducer } from '@trawl/streams';
import { eventId } from '@trawl/streams';
import type { CrawlSpec } from '@trawl/schemas';
import {
  confirmJob,
  crawlSpec,
  createScheduleWithinQuota,
  dedupeKey,
  getWebsite,
  inTransaction,
  jobIdForSlot,
  QuotaExceededError,
  releaseJob,
  reserveJob,
  resolvedSpec,
  websiteLayer,
  type DedupeInput,
  type CrawlRequest,
  type OverlapPolicy,
  type Pool,
  type PoolClient,
  type QuotaLimits,
  type Website,
} from '@trawl/store';
import { specParamNames, templateNames } from '@trawl/crawl';
import { credentialFingerprint, mapCredentials, sealCredentials, sealForStorage, userSecretLookup, type SecretBox } from '@trawl/store/secrets';
import { ApiError } from '../errors.ts';
import { checkRetention } from '../content/retention.ts';
import { checkPatterns } from './check-patterns.ts';
import { checkSelectors } from './check-selectors.ts';
import { checkOptions, checkReach, hostsOf } from './check-request-options.ts';
import { reachLayer, type ReachInput } from './reach-input.ts';
import { parseInterval, parseTimeZone } from './interval.ts';

export interface CrawlBody extends ReachInput {
  readonly spider?: string;
  readonly start_urls: readonly string[];
  readonly depth: number;
  readonly max_pages?: number;
  readonly schedule_at?: string;
  readonly interval?: string;
  readonly time_zone?: string;
  readonly overlap?: OverlapPolicy;
  /** Scheduled crawls: a slot is answered from an identical crawl started within the dedupe TTL. */
  readonly dedupe?: boolean;
  readonly ignore_cache?: boolean;
  /** Keep page bodies for the HTTP cache; default false, true for a recurring schedule's runs. */
  readonly store_in_cache?: boolean;
  readonly params?: Readonly<Record<string, string>>;
  readonly formats?: readonly string[];
  readonly content_retention?: number;
  readonly max_age?: number;
  /** What start URLs that are a site's root do with its sitemaps; default include. */
  readonly sitemap?: 'include' | 'only' | 'skip';
  /** Request options (@trawl/crawl request-options.ts), over the spider's field by field. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly user_agent?: string;
  readonly locale?: string;
  readonly cookies?: Readonly<Record<string, readonly string[]>>;
}

/** The fields of a crawl body a schedule's request keeps. */
export type RequestFields = Pick<CrawlBody, 'spider' | 'start_urls' | 'depth' | 'max_pages' | 'params' | 'formats' | 'content_retention' | 'max_age' | 'ignore_cache' | 'store_in_cache' | 'sitemap' | 'headers' | 'user_agent' | 'locale' | 'cookies' | keyof ReachInput>;

export type CrawlOutcome =
  | { readonly scheduled: false; readonly job_id: string; readonly cached: boolean; readonly cached_at?: Date; readonly max_pages?: number }
  /** `job_id`: the job of the next slot, derived from the slot as the dispatcher derives it. */
  | { readonly scheduled: true; readonly schedule_id: string; readonly next_run: Date; readonly job_id: string };

export type EventEmitter = Pick<EventProducer, 'emit'>;

export interface CrawlServiceOptions {
  readonly pool: Pool;
  readonly producer: EventEmitter;
  readonly dedupeTtlSeconds: number;
  /** Every user's quotas unless `user_quotas` says otherwise. */
  readonly quotas: QuotaLimits;
  /** The longest `content_retention` a crawl may ask for (seconds). */
  readonly maxContentRetentionSeconds: number;
  /** Seals the credentials of requests and specs (TRAWL_SECRETS_KEY); read when first needed. */
  readonly secrets: () => SecretBox;
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
    const { request, website } = await this.checkedRequest(userId, body);
    // A schedule's runs are dispatched from its stored request, formats and retention included.
    if (body.schedule_at !== undefined || body.interval !== undefined) return this.schedule(userId, request, body);
    if (body.time_zone !== undefined || body.overlap !== undefined || body.dedupe !== undefined) {
      const field = body.time_zone !== undefined ? 'time_zone' : body.overlap !== undefined ? 'overlap' : 'dedupe';
      throw new ApiError('BAD_REQUEST', '`time_zone`, `overlap` and `dedupe` apply to scheduled crawls (with `schedule_at` or `interval`); an immediate crawl is deduplicated unless `ignore_cache`', { field });
    }
    return this.crawlNow(userId, request, website, body.ignore_cache ?? false);
  }

  /**
   * An immediate crawl never answered from the dedupe TTL (`POST /scrape`, `POST /map`): a caller
   * that asks for a page now wants it fetched now, not an hour-old job. Its dedupe row is its own
   * (keyed by its job id, which the caller may choose: it waits for the job's events before they
   * exist), so it answers no later crawl either. `ignore_cache` keeps its meaning for
   * the HTTP cache (`max_age` reuse, revalidation). Quotas apply as to any crawl.
   */
  async submitFresh(userId: string, body: CrawlBody, jobId: string = randomUUID()): Promise<{ readonly job_id: string; readonly max_pages?: number }> {
    const { request, website } = await this.checkedRequest(userId, body);
    const outcome = await this.crawlNow(userId, request, website, body.ignore_cache ?? false, null, jobId);
    if (outcome.scheduled) throw new Error('a fresh crawl is never scheduled');
    return outcome;
  }

  /** The request a crawl body asks for, its spider usable by the caller and its params complete (also what a schedule's PATCH stores). */
  async checkedRequest(
    userId: string,
    body: RequestFields,
  ): Promise<{ request: CrawlRequest; website: Website | null }> {
    checkRetention(body.content_retention, this.options.maxContentRetentionSeconds);
    const website = await this.spider(userId, body.spider);
    // The crawl's own options; the website's were checked when it was saved. Cookies may be for any host the crawl fetches from.
    // Checked clear: a header or cookie named by secret is its value (UNKNOWN_SECRET first when there is none).
    const clear = await this.clearOptions(userId, { headers: body.headers, cookies: body.cookies });
    checkOptions({ headers: clear.headers, user_agent: body.user_agent, locale: body.locale, cookies: clear.cookies }, hostsOf([...body.start_urls, ...(website ? [website.base_url] : [])], website?.allowed_hosts ?? []));
    const reach = reachLayer(body);
    checkPatterns({ include_patterns: reach.include_patterns ?? [], exclude_patterns: reach.exclude_patterns ?? [] });
    checkReach(reach);
    if (website) checkSharedCredentials(website, body);
    const request: CrawlRequest = {
      spider: body.spider ?? null,
      start_urls: [...new Set(body.start_urls)],
      depth: body.depth,
      max_pages: body.max_pages ?? null,
      params: body.params ?? {},
      formats: body.formats ?? [],
      content_retention: body.content_retention ?? null,
      // The HTTP cache; the dedupe key leaves both out: a crawl that only reuses pages differently is the same crawl.
      ...(body.max_age ? { max_age: body.max_age } : {}),
      ...(body.ignore_cache ? { ignore_cache: true } : {}),
      ...(body.store_in_cache !== undefined ? { store_in_cache: body.store_in_cache } : {}),
      // Stored (and in the dedupe key) only when it is not the default, so requests from before sitemaps read the same.
      ...(body.sitemap && body.sitemap !== 'include' ? { sitemap: body.sitemap } : {}),
      // Request options, stored only when given (and in the dedupe key by fingerprint).
      ...(body.headers && Object.keys(body.headers).length > 0 ? { headers: body.headers } : {}),
      ...(body.user_agent ? { user_agent: body.user_agent } : {}),
      ...(body.locale ? { locale: body.locale } : {}),
      ...(body.cookies && Object.keys(body.cookies).length > 0 ? { cookies: body.cookies } : {}),
      // Reach options (proxies, sessions, login, actions, link rules…), stored only when given.
      ...reach,
    };
    checkParams(request, website);
    // What is kept (a schedule's request, api_jobs) holds literal credentials sealed and secrets by name.
    return { request: await this.sealed(userId, request), website };
  }

  /** Headers and cookies as they will be sent: literals as given, secrets' values (UNKNOWN_SECRET); in memory only, for the checks. */
  private async clearOptions<T extends object>(userId: string, options: T): Promise<T> {
    const box = this.options.secrets();
    return (await sealForStorage(options, { box, lookup: userSecretLookup(this.options.pool, box, userId) })).clear;
  }

  /** `request` with its literal credentials sealed, its secrets' names checked (UNKNOWN_SECRET). */
  private async sealed(userId: string, request: CrawlRequest): Promise<CrawlRequest> {
    const box = this.options.secrets();
    return (await sealForStorage(request, { box, lookup: userSecretLookup(this.options.pool, box, userId) })).sealed;
  }

  /**
   * The dedupe key of a kept request: computed over its credentials' clear values (opened in
   * memory; the key is a keyed fingerprint of them), since sealing is randomised.
   */
  private async keyOf(userId: string, request: CrawlRequest): Promise<string> {
    const box = this.options.secrets();
    const { clear } = await sealCredentials(request, { box, lookup: userSecretLookup(this.options.pool, box, userId), from: 'stored' });
    // The clear copy has every credential a string, as DedupeInput wants.
    return dedupeKey(clear as DedupeInput, credentialFingerprint(box));
  }

  /**
   * A new job over `urls` (a job's failed pages), with the first job's spider and params, depth 0,
   * linked to it by `retry_of`. Deduplicated as any crawl: asking twice within the TTL answers with
   * the same retry job.
   */
  async retryFailed(userId: string, of: { readonly job_id: string; readonly spider: string | null; readonly params: Readonly<Record<string, string>> }, urls: readonly string[]): Promise<CrawlOutcome> {
    const website = await this.spider(userId, of.spider ?? undefined);
    // The failed pages alone: a failed root does not bring its site's sitemaps back.
    const request: CrawlRequest = { spider: of.spider, start_urls: [...new Set(urls)], depth: 0, max_pages: urls.length, params: of.params, sitemap: 'skip' };
    return this.crawlNow(userId, request, website, false, of.job_id);
  }

  /**
   * A re-extraction of a finished job (`POST /jobs/:id/reextract`): a new job whose spec is
   * `spec(maxPages)` (reextract-spec.ts: the source's, with the new extraction rules and
   * `reextract_of`), admitted within the quotas like any job, its start URLs the source's (shown,
   * never fetched). Deduplicated as any crawl, by the source and the rules asked: the same
   * re-extraction asked twice within the TTL answers with the same job.
   */
  async reextract(userId: string, of: { readonly job_id: string; readonly spider: string | null; readonly start_urls: readonly string[]; readonly params: Readonly<Record<string, string>> }, pages: number, key: string, spec: (maxPages: number) => CrawlSpec): Promise<CrawlOutcome> {
    const request: CrawlRequest = { spider: of.spider, start_urls: [...new Set(of.start_urls)], depth: 0, max_pages: pages, params: of.params, sitemap: 'skip' };
    return this.crawlNow(userId, request, null, false, null, null, { key: `reextract:${of.job_id}:${key}`, spec, reextractOf: of.job_id });
  }

  private async spider(userId: string, spider: string | undefined): Promise<Website | null> {
    if (spider === undefined) return null;
    const website = await getWebsite(this.options.pool, spider);
    if (!website || (website.owner_id !== null && website.owner_id !== userId)) {
      throw new ApiError('UNKNOWN_SPIDER', `spider "${spider}" is not a website you can use`, { field: 'spider' });
    }
    // A website saved before patterns ran in the linear-time engine, or before selectors were
    // checked, may hold one they refuse.
    try {
      checkPatterns(website);
      checkSelectors(website);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      throw new ApiError(err.code, `spider "${spider}": ${err.message}; change the website first`, { field: 'spider', cause: err });
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
    const timeZone = parseTimeZone(body.time_zone ?? 'UTC');
    const id = randomUUID();
    const schedule = await createScheduleWithinQuota(
      this.options.pool,
      { id, owner_id: userId, request, cadence: { runAt, ...repeat, timeZone }, overlap: body.overlap ?? 'skip', dedupe: body.dedupe ?? false },
      this.options.quotas,
      now,
    );
    return { scheduled: true, schedule_id: schedule.id, next_run: schedule.next_due!, job_id: jobIdForSlot(schedule.id, schedule.next_due!) };
  }

  private async crawlNow(
    userId: string,
    request: CrawlRequest,
    website: Website | null,
    ignoreCache: boolean,
    retryOf: string | null = null,
    freshJobId: string | null = null,
    fixed?: { readonly key: string; readonly spec: (maxPages: number) => CrawlSpec; readonly reextractOf: string },
  ): Promise<CrawlOutcome> {
    const proposed = freshJobId ?? randomUUID();
    const base = fixed ? fixed.key : freshJobId !== null ? `fresh:${proposed}` : await this.keyOf(userId, request);
    const key = retryOf === null ? base : `retry:${retryOf}:${base}`;
    const wanted = crawlSpec(website, { depth: request.depth, max_pages: request.max_pages }).max_pages;
    const claim = (db: Pick<PoolClient, 'query'>) => db.query<{ job_id: string; created_at: Date }>(CLAIM_DEDUPE_ROW, [userId, key, proposed, this.options.dedupeTtlSeconds, ignoreCache]);
    // A repeat within the TTL is answered without touching the quotas.
    const reusable = !ignoreCache && freshJobId === null;
    if (reusable) {
      const cached = await this.cachedJob(userId, key);
      if (cached) return cached;
    }
    for (let attempt = 0; ; attempt++) {
      // 1. The quota decision and the job's reservation, committed: the user's quota lock is not held past it.
      let maxPages: number;
      try {
        ({ maxPages } = await reserveJob(this.options.pool, { jobId: proposed, userId, wantedPages: wanted }, this.options.quotas, this.now()));
      } catch (err) {
        // A cached answer costs no quota: an identical crawl in flight (or just committed) still answers.
        const twin = err instanceof QuotaExceededError && reusable ? await this.twinJob(userId, key, claim) : undefined;
        if (twin) return twin;
        throw err;
      }
      // 2. The job: its dedupe row, its events acknowledged by Kafka, then the commit that confirms the reservation.
      let outcome: CrawlOutcome | undefined;
      try {
        outcome = await inTransaction(this.options.pool, async (tx) => {
          const claimed = await claim(tx);
          // An unexpired row exists (possibly committed by a concurrent twin a moment ago).
          if (claimed.rows.length === 0) return this.cachedJob(userId, key, tx);
          await tx.query('INSERT INTO api_jobs (job_id, user_id, dedupe_key, request) VALUES ($1, $2, $3, $4)', [
            proposed,
            userId,
            key,
            JSON.stringify({ ...request, retry_of: retryOf, ...(fixed ? { reextract_of: fixed.reextractOf } : {}) }),
          ]);
          const spec = fixed ? fixed.spec(maxPages) : await this.specOf(tx, userId, request, website, ignoreCache, maxPages);
          await this.emit(proposed, userId, request, website, key, ignoreCache, maxPages, retryOf, spec);
          await confirmJob(tx, proposed);
          return { scheduled: false, job_id: proposed, cached: false, max_pages: maxPages } as const;
        });
      } catch (err) {
        await this.release(proposed);
        throw err;
      }
      // Nothing started (answered from the dedupe row, or the row vanished): the reservation goes.
      if (!outcome || (!outcome.scheduled && outcome.cached)) await this.release(proposed);
      if (outcome) return outcome;
      // The row vanished between INSERT and SELECT (an expiry purge): claim again.
      if (attempt >= 2) throw new ApiError('DEPENDENCY_UNAVAILABLE', 'dedupe row kept changing; retry');
    }
  }

  /** The unexpired job of a dedupe key, as a cached answer; undefined when there is none. */
  private async cachedJob(userId: string, key: string, db: Pick<Pool, 'query'> = this.options.pool): Promise<CrawlOutcome | undefined> {
    const { rows } = await db.query<{ job_id: string; created_at: Date }>('SELECT job_id, created_at FROM crawl_dedupe WHERE user_id = $1 AND dedupe_key = $2 AND expires_at > now()', [userId, key]);
    const row = rows[0];
    return row ? { scheduled: false, job_id: row.job_id, cached: true, cached_at: row.created_at } : undefined;
  }

  /**
   * The job of an identical crawl, committed or in flight: the claim of its dedupe row waits for a
   * twin's transaction, then sees its row. No twin: the claim is rolled back and there is none — also
   * for a twin caught between its reservation and its claim (a few statements), whose refused
   * duplicate then gets the 429 and, retried, the cached job.
   */
  private async twinJob(userId: string, key: string, claim: (db: PoolClient) => Promise<{ rows: unknown[] }>): Promise<CrawlOutcome | undefined> {
    const client = await this.options.pool.connect();
    try {
      await client.query('BEGIN');
      if ((await claim(client)).rows.length > 0) return undefined;
      return await this.cachedJob(userId, key, client);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  }

  /** Drops a reservation whose job did not start; one left behind (Postgres away) lapses by itself. */
  private async release(jobId: string): Promise<void> {
    await releaseJob(this.options.pool, jobId).catch(() => undefined);
  }

  /** The job's spec: the website's options and the request's, every credential sealed. */
  /** `db`: the transaction the job is admitted in (its secrets are read there, not on a second connection). */
  private async specOf(db: PoolClient, userId: string, request: CrawlRequest, website: Website | null, ignoreCache: boolean, maxPages: number): Promise<CrawlSpec> {
    const box = this.options.secrets();
    const limits = { depth: request.depth, max_pages: maxPages, formats: request.formats ?? [], max_age: request.max_age ?? null, ignore_cache: ignoreCache, store_in_cache: request.store_in_cache ?? false, sitemap: request.sitemap ?? 'include' };
    return resolvedSpec(website, limits, [{ options: request, from: 'stored' }], { box, lookup: userSecretLookup(db, box, userId) });
  }

  private async emit(jobId: string, userId: string, request: CrawlRequest, website: Website | null, key: string, ignoreCache: boolean, maxPages: number, retryOf: string | null, spec: CrawlSpec): Promise<void> {
    const requestedId = eventId('CrawlRequested', jobId);
    try {
      // Both go out in the producer's same batch; same key, so JobDispatched follows CrawlRequested.
      await Promise.all([
        this.options.producer.emit(
          'CrawlRequested',
          { job_id: jobId, user_id: userId, spider: request.spider, start_urls: request.start_urls, depth: request.depth,
            max_pages: request.max_pages, params: request.params, dedupe_key: key, ignore_cache: ignoreCache, retry_of: retryOf, sitemap: request.sitemap ?? 'include' },
          { eventId: requestedId, key: jobId },
        ),
        this.options.producer.emit(
          'JobDispatched',
          { job_id: jobId, user_id: userId, target_id: null, schedule_id: null, search_url: request.start_urls[0]!,
            start_urls: request.start_urls, keywords: [], location: null,
            spec,
            attempt: 1, params: request.params },
          { eventId: eventId('JobDispatched', jobId), causationId: requestedId, key: jobId },
        ),
      ]);
    } catch (err) {
      throw new ApiError('DEPENDENCY_UNAVAILABLE', 'could not publish the crawl to Kafka; nothing was created, retry later', { cause: err });
    }
  }
}

/**
 * Claims a dedupe key for a new job: the row is taken when absent, expired, or `ignore_cache`
 * ($5); concurrent claims of one key queue on its row lock, and a claim that returns no row found
 * an unexpired one (committed, maybe by a twin a moment ago).
 */
const CLAIM_DEDUPE_ROW = `INSERT INTO crawl_dedupe (user_id, dedupe_key, job_id, created_at, expires_at)
  VALUES ($1, $2, $3, now(), now() + make_interval(secs => $4))
  ON CONFLICT (user_id, dedupe_key) DO UPDATE
    SET job_id = EXCLUDED.job_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE crawl_dedupe.expires_at <= now() OR $5::boolean
  RETURNING job_id, created_at`;

/**
 * A shared website (the operator's) that carries credentials — headers, cookies, proxy or login
 * credentials, typed text — sends them to the pages its crawls fetch: a crawl on it stays on its
 * hosts (start URLs on its base URL's host or `allowed_hosts`, no wider `scope`), so no user can
 * aim the operator's credentials at a host of their own. A user's own website is theirs to aim.
 */
export function checkSharedCredentials(website: Website, body: Pick<CrawlBody, 'start_urls' | 'scope'>): void {
  if (website.owner_id !== null) return;
  let carries = false;
  mapCredentials(websiteLayer(website), (value) => {
    carries = true;
    return value;
  });
  if (!carries) return;
  const hosts = [new URL(website.base_url).hostname.toLowerCase(), ...website.allowed_hosts.map((h) => h.trim().toLowerCase())];
  const onHosts = (host: string) => hosts.some((h) => (h.startsWith('*.') ? host.endsWith(h.slice(1)) : host === h));
  for (const [i, url] of body.start_urls.entries()) {
    if (!onHosts(new URL(url).hostname.toLowerCase())) {
      throw new ApiError('SHARED_SPIDER_HOSTS', `start_urls.${i} is not on a host of the shared website "${website.id}", which sends credentials to the pages it fetches`, { field: `start_urls.${i}` });
    }
  }
  if (body.scope !== undefined && body.scope !== 'same_host') {
    throw new ApiError('SHARED_SPIDER_HOSTS', `scope "${body.scope}" would take the shared website "${website.id}"'s credentials off its hosts`, { field: 'scope' });
  }
}

/**
 * Every `{{name}}` in the start URLs and in the spider's selectors must have a value: refused here
 * rather than found by the frontier (start URLs) or every worker (selectors) once the job runs.
 */
export function checkParams(request: Pick<CrawlRequest, 'start_urls' | 'params'>, website: Website | null): void {
  const missing = (names: readonly string[]) => names.find((n) => !Object.hasOwn(request.params, n));
  for (const [i, url] of request.start_urls.entries()) {
    const name = missing(templateNames(url));
    if (name !== undefined) throw new ApiError('MISSING_PARAM', `start URL "${url}" uses {{${name}}}, which params do not give`, { field: `start_urls.${i}` });
  }
  if (!website) return;
  const name = missing(specParamNames(crawlSpec(website)));
  if (name !== undefined) throw new ApiError('MISSING_PARAM', `spider "${website.id}" selects with {{${name}}}, which params do not give`, { field: 'params' });
}

/** Drops dedupe rows that expired long ago; live rows and recent ones are untouched. */
export async function purgeExpiredDedupe(pool: Pool, olderThanSeconds = 86_400): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM crawl_dedupe WHERE expires_at < now() - make_interval(secs => $1)', [olderThanSeconds]);
  return rowCount ?? 0;
}
