/**
 * The Kafka side of a worker: each FetchRequested goes through the crawl's PageProcessor (robots,
 * politeness, fetch, parse), then its events are produced — items before their PageFetched, so by
 * the time the frontier counts the page done, and may complete the job, everything the page
 * yielded is durable in Kafka.
 *
 * A page is recorded whole or not at all, as far as size goes: its events are built bounded to the
 * producer's event limit (pageEvents), then every one of them is encoded and measured before the
 * first is sent. Should one still be over the limit, the page fails as a whole (a non-retriable
 * TRAWL_EVENT_TOO_LARGE, then PageFailed) with none of its items written, instead of some items in
 * Kafka, the page failed, and the read models' items disagreeing with the job's counters.
 *
 * A job that asks for formats (CrawlSpec.formats) has each HTML page's body and formats written to
 * the content store before any of the page's events: a worker killed in between leaves objects
 * (content-addressed, so its retry finds them and writes nothing twice) and no event; a store that
 * does not answer fails the delivery as retriable. Other cacheable pages have their body stored for
 * the HTTP cache, best effort (page-content-store.ts); a page served from the cache (a 304, or
 * within max_age) names the stored body it was parsed from, and is marked `from_cache`.
 *
 * A start URL that is a site's root also reads the site's sitemaps (CrawlSpec.sitemap, the crawl's
 * sitemap-reader.ts); their URLs travel in its PageFetched (`sitemap_urls`), for the frontier.
 *
 * Failures are thrown with their `retriable` flag: the streams consumer forwards retriable ones
 * through the retry tiers and sends the rest (and the last attempt) to trawl.fetch.dlq; the
 * dead-letter hook then produces PageFailed so the job can still complete. A page past its budget
 * (page-budget.ts) fails with BudgetExceededError: retried, and poison after TRAWL_MAX_DELIVERIES
 * deliveries without an outcome — its PageFailed then carries the streams error's code
 * (TRAWL_POISON, TRAWL_BUDGET_EXCEEDED).
 *
 * A host that cannot take the fetch soon (HostBusyError: a Retry-After pause, or spacing past
 * TRAWL_HOST_DEFER_AFTER_MS) defers it (DeferredError): the consumer parks it in a retry tier until
 * its due time, as the same attempt, and its slot goes to the next fetch.
 *
 * A fetch runs in its user's and job's turn for one of the worker's fetch slots (fetch-slots.ts):
 * the consumer hands over more fetches than may run, and the slots go round the users waiting (then
 * a user's jobs), so that one user's backlog of slow hosts does not run ahead of everyone else's.
 */
import { counterIn, DeferredError, defaultMetrics, describeError, NonRetriableError, StreamsError, type ConsumedEventOf, type DeadLetter, type EventProducer, type Logger } from '@trawl/streams';
import { BlockedError, HostBusyError, pageEvents, pageFailedEvent, unsafeAddressLogFields, type FetchWithSpec, type PageProcessor, type ThrottleSettingReport } from '@trawl/crawl';
import type { FetchRequested } from '@trawl/schemas';
import type { Registry } from 'prom-client';
import type { FetchSlots } from './fetch-slots.ts';
import type { PageContentStore } from './page-content-store.ts';
import type { PageDownloads } from './page-downloads.ts';
import { pageBudget } from './page-budget.ts';
import type { SpecCache } from './spec-cache.ts';

export interface FetchHandlerDeps {
  /** The crawl's PageProcessor (parsing in-line or on threads). */
  readonly processor: Pick<PageProcessor, 'process'>;
  /** Fetches and stores a page's linked files (CrawlSpec.downloads); without it, none is. */
  readonly downloads?: Pick<PageDownloads, 'run'>;
  readonly producer: EventProducer;
  readonly logger: Logger;
  /** Jobs known to be over (cancelled, completed): their remaining fetches are skipped. */
  readonly endedJobs: ReadonlySet<string>;
  /** The wall clock a page's fetch and parse may take (TRAWL_PAGE_BUDGET_MS). */
  readonly pageBudgetMs: number;
  /** Specs by hash, for requests that carry `spec_hash` rather than the spec. */
  readonly specs: Pick<SpecCache, 'get'>;
  /** Where the pages of jobs asking for formats go; without it, none is kept. */
  readonly content?: PageContentStore;
  /** The worker's fetch slots, handed out between jobs in turn; without them a fetch runs as soon as the consumer hands it over. */
  readonly slots?: Pick<FetchSlots, 'run'>;
  /** Takes what the worker has to tell a job's log (proxy-pool.ts takeNotes: a proxy benched); said on the job's next PageFetched. */
  readonly notes?: (jobId: string) => readonly string[];
  /** What the adaptive throttle chose for an adaptive_throttle job's host, when it is news (throttle-reports.ts); said on the page's PageFetched (`throttle`). */
  readonly throttle?: (jobId: string, host: string) => ThrottleSettingReport | null;
  /** Where the fetch outcomes are counted; default the process-wide registry. */
  readonly metrics?: Registry;
}

/** Fetch outcomes by class: `fetched` by HTTP status class (2xx…) and render mode, `failed` by error code, `error` (retried) by error class. */
function fetchOutcomes(registry: Registry) {
  return counterIn(registry, 'trawl_worker_fetches_total', 'Page fetches by outcome (fetched, failed, error: retried) and class (HTTP status class, error code or class) and render mode.', ['outcome', 'class', 'render_mode']);
}

export class FetchHandler {
  private readonly outcomes;
  private readonly fromCache;
  private readonly blocked;

  constructor(private readonly deps: FetchHandlerDeps) {
    this.outcomes = fetchOutcomes(deps.metrics ?? defaultMetrics);
    this.blocked = counterIn(deps.metrics ?? defaultMetrics, 'trawl_worker_blocked_total', 'Answers taken for block pages (never stored; retried with back-off), by rule: challenge, captcha, pattern, small_body, login_wall.', ['rule']);
    this.fromCache = counterIn(deps.metrics ?? defaultMetrics, 'trawl_worker_pages_from_cache_total', 'Pages whose stored body was parsed instead of one fetched now: not_modified (a conditional request answered 304), max_age (reused without a request).', ['reuse']);
  }

  async handle(event: ConsumedEventOf<'FetchRequested'>): Promise<void> {
    if (this.deps.endedJobs.has(event.value.job_id)) return;
    const request = await this.withSpec(event.value);
    const budget = pageBudget(this.deps.pageBudgetMs, event.signal, request.url);
    let page: Awaited<ReturnType<FetchHandlerDeps['processor']['process']>> | undefined;
    try {
      // In its user's and job's turn for a fetch slot (fetch-slots.ts); a job that ended while it waited is skipped.
      const fetchPage = async () => (this.deps.endedJobs.has(request.job_id) ? undefined : budget.run(this.withDownloads(request, this.deps.processor.process(request, { signal: budget.signal }), budget.signal)));
      const turn = { jobId: request.job_id, userId: request.user_id ?? null, partition: `${event.topic}:${event.partition}`, signal: budget.signal };
      page = await (this.deps.slots ? this.deps.slots.run(turn, fetchPage) : fetchPage());
    } catch (err) {
      // The host cannot take it soon (Retry-After, spacing): parked until due, the consumer slot freed.
      if (err instanceof HostBusyError) throw new DeferredError(err.message, err.dueAt, { cause: err });
      // The tenant's PageFailed says only "refused" (errors.ts, UnsafeAddressError): which address and
      // which range refused it is the operator's to know, here.
      const refusal = unsafeAddressLogFields(err);
      if (refusal) this.deps.logger.warn({ job_id: request.job_id, fetch_id: request.fetch_id, url: request.url, ...refusal }, 'fetch refused by the egress rules');
      // A block page: said once per answer (the rule and why, never the body), then retried like any retriable failure
      // (a login wall without a login is not: LoginRequiredError, PageFailed at once).
      if (err instanceof BlockedError) {
        this.blocked.inc({ rule: err.verdict.rule });
        this.deps.logger.warn({ job_id: request.job_id, fetch_id: request.fetch_id, url: request.url, attempt: event.attempt, status: err.status, rule: err.verdict.rule, reason: err.verdict.reason }, 'blocked');
      }
      this.outcomes.inc({ outcome: 'error', class: describeError(err).code ?? describeError(err).errorClass, render_mode: 'unknown' });
      throw err;
    }
    if (!page) return;
    // PageFetched has no field for it: what the parse limits left out is said here, once per page.
    if (page.cut) this.deps.logger.warn({ job_id: request.job_id, url: request.url, cut: page.cut }, 'page cut by the parse limits');
    // What the site's sitemaps gave, and why any document was not read, said once per site root.
    if (page.sitemaps) {
      const { urls, dropped, documents } = page.sitemaps;
      this.deps.logger.info({ job_id: request.job_id, url: request.url, urls: urls.length, dropped, documents }, 'sitemaps read');
    }
    // Stored before PageFetched is produced: an event never names an object not yet written.
    const content = this.deps.content ? await this.deps.content.store(request, page) : undefined;
    const built = pageEvents(request, page, event.attempt, { maxEventBytes: this.deps.producer.maxEventBytes, ...(content ? { content } : {}) });
    // The job's notes (a proxy benched since its previous page here) ride on this page's line of the job log.
    const notes = this.deps.notes?.(request.job_id) ?? [];
    // The throttle's choice for the page's host, when it moved enough to tell the job (its log and view).
    const throttle = request.spec.adaptive_throttle && this.deps.throttle ? this.deps.throttle(request.job_id, new URL(request.url).host) : null;
    const { items } = built;
    const fetched = notes.length > 0 || throttle ? { ...built.fetched, ...(notes.length > 0 ? { notes: [...notes] } : {}), ...(throttle ? { throttle } : {}) } : built.fetched;
    const encodedItems = await Promise.all(items.map((item) => this.deps.producer.encodeEvent('ItemExtracted', item)));
    const encodedPage = await this.deps.producer.encodeEvent('PageFetched', fetched);
    await Promise.all(encodedItems.map((item) => this.deps.producer.sendRaw(item)));
    await this.deps.producer.sendRaw(encodedPage);
    this.outcomes.inc({ outcome: 'fetched', class: fetched.status ? `${Math.floor(fetched.status / 100)}xx` : 'none', render_mode: String(fetched.render_mode ?? 'http') });
    if (fetched.from_cache) this.fromCache.inc({ reuse: fetched.from_cache });
  }

  /** The page, with its linked files fetched and stored (page-downloads.ts): in the page's fetch slot and budget, before its events. */
  private async withDownloads(request: FetchWithSpec, processing: ReturnType<PageProcessor['process']>, signal: AbortSignal): ReturnType<PageProcessor['process']> {
    const page = await processing;
    if (!this.deps.downloads || !page.downloads || page.downloads.length === 0) return page;
    return { ...page, storedDownloads: await this.deps.downloads.run(request, page.downloads, signal) };
  }

  /** The dead-letter hook: a fetch given up for good still ends, as PageFailed. */
  async onDeadLetter(dead: DeadLetter): Promise<void> {
    if (dead.event?.name !== 'FetchRequested') {
      this.deps.logger.error({ reason: dead.reason, origin: dead.origin, error: dead.errorMessage }, 'undecodable fetch request dead-lettered');
      return;
    }
    const request = await this.withSpec(dead.event.value as FetchRequested);
    const failed = pageFailedEvent(request, dead.error, dead.attempts);
    // Given up by the consumer itself (poison, a budget overrun exhausted): its code says so.
    const ended = dead.error instanceof StreamsError ? { ...failed, error_code: dead.error.code } : failed;
    await this.deps.producer.emitEvent('PageFailed', ended);
    this.outcomes.inc({ outcome: 'failed', class: ended.error_code ?? 'unknown', render_mode: 'unknown' });
  }

  /** The request with its spec: inline in events written before the reference, else loaded by hash. */
  private async withSpec(request: FetchRequested): Promise<FetchWithSpec> {
    if (request.spec) return request as FetchWithSpec;
    if (!request.spec_hash) throw new NonRetriableError(`FetchRequested ${request.fetch_id} carries neither a spec nor a spec_hash`);
    return { ...request, spec: await this.deps.specs.get(request.spec_hash) };
  }
}
