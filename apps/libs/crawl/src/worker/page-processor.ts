import { hasRequestOptions, type CachedPage, type CacheReuse, type CrawlSpec } from '@trawl/schemas';
import type { FetchWithSpec } from '../spec/spec-reference.ts';
import { BlockedError, FetchTimeoutError, LoginRequiredError, NetworkError, RobotsDisallowedError } from '../errors.ts';
import { planCacheUse, type CachePlan } from '../cache/cache-plan.ts';
import { revalidated, type HttpValidators } from '../cache/validators.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import type { FetchOptions } from '../fetch/http-fetcher.ts';
import { statusError } from '../fetch/status-error.ts';
import { isPdfType, parseContentType } from '../fetch/content-type.ts';
import { downloadFile, type DownloadDeps, type DownloadedFile } from './file-download.ts';
import type { PageFetcher } from '../fetch/page-fetcher.ts';
import type { ExtractedItem } from '../parse/extract-items.ts';
import { parsePage, DEFAULT_PARSE_LIMITS, type PageCut, type ParsedPage, type ParseLimits } from '../parse/parse-page.ts';
import { hostPolicyOf } from '../politeness/host-limiter.ts';
import { throttleBoundsOf, type AutoThrottle, type ThrottleOutcome } from '../politeness/auto-throttle.ts';
import type { BlockClassifier } from '../blocks/block-classifier.ts';
import { requestProfileOf } from '../request/request-profile.ts';
import { openSpecCredentials } from '../request/credentials.ts';
import { RulesCache } from './rules-cache.ts';
import { hostOf } from '../rules/crawl-rules.ts';
import { itemsDigest, type NearDuplicates } from '../dedupe/near-duplicates.ts';
import type { PageMetadata } from '../parse/page-metadata.ts';
import { isReextraction, storedPage, type StoredBodyReader } from './reextract-page.ts';
import { wantsSitemaps, type SitemapDiscovery, type SitemapReader } from '../sitemap/sitemap-reader.ts';
import { specWithParams } from '../params/param-template.ts';
import { poolSizeOf, type SessionLease, type SessionPool } from '../session/session-pool.ts';
import { politeLoginGate } from '../session/login-gate.ts';
import { browserWorkOf, needsBrowser } from '../fetch/browser-work.ts';
import { ProxyConnectError, type ProxyChoice } from '../proxy/proxy-pool.ts';

/**
 * Stored page bodies by content hash, for the HTTP cache (the worker's content store). Undefined
 * for a body that is missing (deleted with its job's content, never written) or cannot be read now:
 * the page is then fetched in full, never failed for it.
 */
export interface CachedBodies {
  body(hash: string, options?: { signal?: AbortSignal }): Promise<string | undefined>;
}

/** One HTML page to parse, with what a parser on another thread needs to compile the job's rules. */
export interface ParseJob {
  readonly html: string;
  readonly url: string;
  readonly finalUrl: string;
  readonly jobId: string;
  readonly spec: CrawlSpec;
  readonly limits: ParseLimits;
  /**
   * Derive the text and Markdown formats too (the job keeps one of them), from the main content
   * alone with `mainContent` (CrawlSpec.only_main_content): where the parse runs, within its time
   * limit. A step that cannot derive leaves `derived` out and the worker derives them itself.
   */
  readonly derive?: { readonly mainContent: boolean } | null;
  /** A document (a PDF) instead of HTML (`html` is empty): its text is derived, nothing is parsed. */
  readonly document?: { readonly mediaType: 'application/pdf'; readonly data: Uint8Array; readonly maxPages: number } | null;
}

/** Text and Markdown derived where the page was parsed (the worker's parse threads: @trawl/content derive). */
export interface DerivedFormats {
  readonly text: string;
  readonly markdown: string;
  /** A document's pages, and how many of them were read (TRAWL_PDF_MAX_PAGES). */
  readonly pages?: number;
  readonly pagesRead?: number;
}

/**
 * Where parsing runs: in-line by default; the worker hands it to its parse threads, where the
 * page's `signal` (its budget) stops it.
 */
export type ParseStep = (job: ParseJob, options?: { signal?: AbortSignal }) => Promise<Pick<ParsedPage, 'links' | 'nextPage' | 'items' | 'cut'> & Partial<Pick<ParsedPage, 'canonical' | 'metadata' | 'simhash' | 'downloads'>> & { readonly derived?: DerivedFormats | null }>;

export interface PageProcessorDeps extends DownloadDeps {
  /** For specs that need a browser (`requires_browser`, actions, scrolled lists, screenshots: needsBrowser); without it such fetches go over plain HTTP. */
  readonly browser?: PageFetcher;
  readonly rules?: RulesCache;
  readonly parseLimits?: ParseLimits;
  /** Default: parsePage on this thread, with the job's rules compiled once (RulesCache). */
  readonly parse?: ParseStep;
  /** Where cached bodies are read; without it, requests' cache entries are ignored and every page is fetched in full. */
  readonly cache?: CachedBodies;
  /** Where a re-extraction (CrawlSpec.reextract_of) reads its source's bodies; default `cache`. Without either, its pages fail NOT_STORED. */
  readonly stored?: StoredBodyReader;
  /** The clock a cache entry's age is judged by (epoch ms). */
  readonly now?: () => number;
  /** Reads the sitemaps of start URLs that are a site's root (CrawlSpec.sitemap); without it, none are read. */
  readonly sitemaps?: SitemapReader;
  /** Classifies answers as blocks (blocks/block-classifier.ts); without it, no answer is taken for a block. */
  readonly blocks?: BlockClassifier;
  /** Steers the delay and concurrency of jobs with `adaptive_throttle` (politeness/auto-throttle.ts); without it, such jobs run on their fixed settings. */
  readonly throttle?: AutoThrottle;
  /** Jobs' session pools (CrawlSpec.sessions, login); without it, a page carries the spec's cookies only. */
  readonly sessions?: Pick<SessionPool, 'lease'>;
  /** The pages this worker kept per job and host, to mark near-duplicates (dedupe/near-duplicates.ts); without it, none is marked. */
  readonly nearDuplicates?: Pick<NearDuplicates, 'check'>;
}

/** The session a page's fetch holds, kept for the page's end (a block retires it). */
interface SessionHold {
  lease?: SessionLease;
}

/** A page fetched (and parsed when HTML): what PageFetched and ItemExtracted are built from. */
export interface ProcessedPage {
  readonly result: FetchResult;
  /** Links kept by the rules, normalised. */
  readonly links: readonly string[];
  /** The pagination successor, for the frontier to request at the same depth. */
  readonly nextPage: string | null;
  /** Set when the page is a duplicate of this URL (its rel=canonical) and its items were not extracted (parse-page.ts duplicateOf). */
  readonly canonical?: string | null;
  readonly items: readonly ExtractedItem[];
  readonly parsed: boolean;
  /** What the parse limits left out of the page (null: nothing), for the log: events carry no such field. */
  readonly cut: PageCut | null;
  /** Set when the body parsed is the stored one (PageFetched.from_cache): how it was reused, and its hash. */
  readonly cache?: { readonly reuse: CacheReuse; readonly contentHash: string };
  /** The site's sitemaps, read with a start URL that is its root (PageFetched.sitemap_urls). */
  readonly sitemaps?: SitemapDiscovery;
  /** The page's structured data, when the job keeps the `metadata` format (stored as that format, never in an event). */
  readonly metadata?: PageMetadata | null;
  /** PageFetched.simhash: the similarity hash of the page's main text. */
  readonly simhash?: string | null;
  /** PageFetched.near_duplicate_of: the page of the job this one nearly repeats (dedupe/near-duplicates.ts). */
  readonly nearDuplicateOf?: string | null;
  /** Text and Markdown derived with the parse (an HTML page's, a PDF's): what the text and markdown formats store. */
  readonly derived?: DerivedFormats | null;
  /** Linked files the job's downloads fetch (CrawlSpec.downloads), normalised. */
  readonly downloads?: readonly string[];
  /** PageFetched.downloads: the files fetched and stored for this page (the worker's). */
  readonly storedDownloads?: readonly { readonly url: string; readonly sha256: string; readonly content_type: string | null; readonly bytes: number }[];
}

/** Whether the job keeps a format derived from the page's text (text, markdown). */
function wantsDerived(spec: CrawlSpec): boolean {
  return spec.formats.includes('text') || spec.formats.includes('markdown');
}

/** The limiter's own default for a job that leaves host_concurrency at 0 (host-limiter.ts). */
const DEFAULT_HOST_CONCURRENCY = 2;

/** What an answer tells the throttle: 429, 5xx and blocks are load; other 4xx say nothing either way. */
function throttleOutcome(status: number, blocked: boolean): ThrottleOutcome {
  if (blocked || status === 429 || status >= 500) return 'error';
  return status >= 400 ? 'neutral' : 'ok';
}

const NO_CACHE: CachePlan = { use: 'none', reason: 'no entry' };

/**
 * One FetchRequested, start to end, without Kafka: robots.txt, per-host politeness, the fetch (HTTP or
 * browser), status check, parse. Throws a CrawlError: the caller sends retriable ones to the next
 * retry tier and turns the rest (or the last retry) into PageFailed.
 *
 * Error statuses are failures here: a 404 becomes PageFailed (non-retriable), a 5xx/429 a retry. A
 * 429/503 also pauses the host for everyone (Retry-After, else a doubling backoff). A host that cannot
 * take the fetch soon throws HostBusyError (its due time) before anything is fetched, when the limiter
 * is set to defer.
 *
 * The HTTP cache (cache-plan.ts): a request carrying its user's cache entry may be answered from the
 * stored body. Within the job's max_age nothing is requested at all; otherwise the request is
 * conditional and a 304 means the stored body. Either way the stored body is parsed with this job's
 * rules, so links and items are what a full fetch would give. The body is read before the request
 * goes out: a body that is missing makes the request a plain full one, so a 304 never arrives
 * without a body to reuse, and no page fails or is requested twice for a missing body.
 */
export class PageProcessor {
  private readonly parse: ParseStep;
  private readonly now: () => number;
  private readonly rules: RulesCache;
  constructor(private readonly deps: PageProcessorDeps) {
    const rules = (this.rules = deps.rules ?? new RulesCache());
    this.parse = deps.parse ?? (async (job) => parsePage({ html: job.html, url: job.url, finalUrl: job.finalUrl, rules: rules.get(job.jobId, job.spec), limits: job.limits }));
    this.now = deps.now ?? Date.now;
  }

  /**
   * The page, and for a start URL that is a site's root the site's sitemaps (sitemap-reader.ts).
   * They are read after the page succeeded, so a root that fails (and is retried) costs no sitemap
   * requests, and their URLs travel in the page's PageFetched: sitemaps are no page of the job, and
   * the frontier requests their URLs in the same step that counts the root done. A root reused
   * within max_age reads none: such a crawl asks the site nothing (sitemaps are never cached), so
   * it gives the root's links alone.
   */
  async process(request: FetchWithSpec, options: { signal?: AbortSignal } = {}): Promise<ProcessedPage> {
    const hold: SessionHold = {};
    let page: ProcessedPage;
    try {
      page = await this.processPage(request, { ...options, hold });
    } catch (err) {
      // A session that met a block is retired before the page is retried (on the fresh session of its slot);
      // a login wall without a login is not retried, and no fresh session would get past it.
      if (hold.lease && err instanceof BlockedError && err.retriable) await hold.lease.retire(err.code, request.event_id ?? null);
      throw err;
    }
    if (!this.deps.sitemaps || !wantsSitemaps(request) || page.cache?.reuse === 'max_age') return page;
    const spec = specWithParams(openSpecCredentials(request.spec, this.deps.credentials), request.params ?? {});
    // The job's proxies carry its sitemap requests as they carry its pages.
    const proxy = this.deps.proxies?.pick(request.job_id, spec)?.proxy ?? null;
    const sitemaps = await this.deps.sitemaps.discover(request.url, spec, this.rules.get(request.job_id, spec), { jobId: request.job_id, ...(options.signal ? { signal: options.signal } : {}), ...(proxy ? { proxy } : {}) });
    return { ...page, sitemaps };
  }

  private async processPage(request: FetchWithSpec, options: { signal?: AbortSignal; hold?: SessionHold }): Promise<ProcessedPage> {
    // Selectors may hold `{{name}}` placeholders; a job's params fill them (param-template.ts).
    // Sealed credentials are opened once per spec object; only this in-memory copy holds them clear.
    const spec = specWithParams(openSpecCredentials(request.spec, this.deps.credentials), request.params ?? {});
    // A re-extraction reads its source job's stored body and asks the site nothing (reextract-page.ts).
    if (isReextraction(request)) {
      const { result, contentHash } = await storedPage(request, this.deps.stored ?? this.deps.cache, options);
      if (!result.isHtml) return { result, links: [], nextPage: null, items: [], parsed: false, cut: null, cache: { reuse: 'max_age', contentHash } };
      return this.parsed(request, spec, result, options, { reuse: 'max_age', contentHash });
    }
    // A crawl with request options (cookies, a locale, headers) may be answered another page than
    // the cache's entry was fetched as: it neither reuses nor revalidates one.
    // Nor does a crawl with sessions: a logged-in page is not the anonymous one.
    const plan = this.deps.cache && !hasRequestOptions(spec) && poolSizeOf(spec) === 0 ? planCacheUse({ cached: request.cached, spec, now: this.now() }) : NO_CACHE;
    if (plan.use !== 'none') {
      const started = performance.now();
      const body = await this.deps.cache!.body(plan.entry.content_hash, { signal: options.signal });
      if (body !== undefined) {
        const stored = { etag: plan.entry.etag, lastModified: plan.entry.last_modified };
        if (plan.use === 'reuse') {
          const result = reusedResult(request.url, plan.entry, body, stored, { fetchMs: Math.round(performance.now() - started) });
          return this.parsed(request, spec, result, options, { reuse: 'max_age', contentHash: plan.entry.content_hash });
        }
        const answer = await this.fetchPolitely(request, spec, { url: plan.entry.final_url, headers: plan.headers }, options);
        if (answer.status === 304 && answer.finalUrl === plan.entry.final_url) {
          const result = reusedResult(request.url, plan.entry, body, revalidated(stored, answer.validators ?? stored), answer);
          return this.parsed(request, spec, result, options, { reuse: 'not_modified', contentHash: plan.entry.content_hash });
        }
        return this.finish(request, spec, answer, options);
      }
    }
    return this.finish(request, spec, await this.fetchPolitely(request, spec, undefined, options), options);
  }

  /** robots.txt, the host's politeness slot, the fetch; a 429/503 slows the host down. The job's request options go with robots.txt and the page alike. */
  private async fetchPolitely(request: FetchWithSpec, spec: CrawlSpec, conditional: FetchOptions['conditional'], options: { signal?: AbortSignal; hold?: SessionHold }): Promise<FetchResult> {
    const { url } = request;
    const base = requestProfileOf(spec, this.deps.credentials);
    // The page's proxy (proxy-pool.ts), one pick per page; robots.txt goes through it too: a site
    // that answers only through a proxy answers its robots.txt only so.
    const picked: ProxyChoice | null = this.deps.proxies?.pick(request.job_id, spec) ?? null;
    const robotsStarted = performance.now();
    const robots = await this.deps.robots.check(url, { request: base, ...(picked ? { proxy: picked.proxy } : {}) }).catch((err: unknown) => {
      // A proxy that cannot reach robots.txt fails the page like one that cannot reach the page (retried, counted for benching).
      if (picked && err instanceof ProxyConnectError) this.deps.proxies!.report(picked, 'error', performance.now() - robotsStarted);
      throw err;
    });
    if (!robots.allowed) throw new RobotsDisallowedError(`robots.txt disallows ${url}`);
    // The page's session (session-pool.ts), logged in before its first page; robots.txt is read without it.
    // A session logs in through the proxy its pages use (per_session: its own).
    const proxyFor = (session: number, generation: number) => (picked ? (spec.proxy_rotation === 'per_session' ? this.deps.proxies!.pick(request.job_id, spec, { session, generation }) : picked)?.proxy ?? null : null);
    // The login's requests take robots.txt's verdict and the host's slot like a page (login-gate.ts);
    // the lease comes before this page's own slot, so a login never waits on the slot of the page it serves.
    const throttle = spec.adaptive_throttle ? this.deps.throttle : undefined;
    const policyOf = (on: string, crawlDelayMs: number | null) => (throttle ? throttle.policy(on, request.job_id, throttleBoundsOf(spec, crawlDelayMs, DEFAULT_HOST_CONCURRENCY)) : hostPolicyOf(spec));
    const gate = politeLoginGate({ robots: this.deps.robots, limiter: this.deps.limiter, jobId: request.job_id, policyOf, profile: base, ...(options.signal ? { signal: options.signal } : {}) });
    const lease = this.deps.sessions ? await this.deps.sessions.lease(request, spec, base, { ...(options.signal ? { signal: options.signal } : {}), proxyFor, gate }) : null;
    if (lease && options.hold) options.hold.lease = lease;
    const profile = lease?.profile ?? base;
    // With per_session rotation a session's page goes through the session's own proxy (a retired session's successor gets another when one is ready).
    const proxy = lease && picked && spec.proxy_rotation === 'per_session' ? this.deps.proxies!.pick(request.job_id, spec, { session: lease.session, generation: lease.generation }) : picked;
    const host = new URL(url).host;
    const browser = needsBrowser(spec) && this.deps.browser ? this.deps.browser : null;
    const fetcher = browser ?? this.deps.http;
    const work = browser ? browserWorkOf(spec) : null;
    // adaptive_throttle: the throttle chooses the job's delay and concurrency on the host, within its settings and Crawl-delay.
    const bounds = throttle ? throttleBoundsOf(spec, robots.crawlDelayMs, DEFAULT_HOST_CONCURRENCY) : null;
    const policy = policyOf(host, robots.crawlDelayMs);
    const release = await this.deps.limiter.acquire(host, { jobId: request.job_id, policy, crawlDelayMs: robots.crawlDelayMs, signal: options.signal });
    const startedAt = performance.now();
    try {
      let result: FetchResult;
      try {
        // A PDF answer is read when the job keeps its text (finish: its text is derived on a parse thread).
        const documents = this.deps.documents && wantsDerived(spec) ? { maxBytes: this.deps.documents.pdfMaxBytes } : null;
        result = await fetcher.fetch(url, { signal: options.signal, ...(conditional ? { conditional } : {}), ...(profile ? { request: profile } : {}), ...(work ? { work } : {}), ...(proxy ? { proxy: proxy.proxy } : {}), ...(documents ? { documents } : {}) });
      } catch (err) {
        // The proxy's own failures count towards benching it; the site's and ours do not.
        if (proxy && err instanceof ProxyConnectError) this.deps.proxies!.report(proxy, 'error', performance.now() - startedAt);
        // A timeout or a dropped connection is the host's load as much as a 503 is.
        if (throttle && (err instanceof FetchTimeoutError || err instanceof NetworkError)) {
          throttle.observe(host, request.job_id, bounds!, 'error', startedAt, performance.now() - startedAt, performance.now(), this.deps.limiter.jobStats(host, request.job_id)?.active);
          this.deps.limiter.updatePolicy(host, request.job_id, throttle.policy(host, request.job_id, bounds!));
        }
        throw err;
      }
      const blocked = this.blockOf(request, spec, host, result);
      // A login wall is the site's rule for every visitor without a session: no ban of the proxy, no load on the host.
      const refused = blocked !== null && blocked.rule !== 'login_wall';
      if (proxy) this.deps.proxies!.report(proxy, refused ? 'banned' : 'ok', result.fetchMs);
      // Told before the slot is given back: releasing first would start the next waiting fetch
      // on a host that has just asked for a pause.
      const steered = throttle ? throttle.policy(host, request.job_id, bounds!).maxConcurrency : 0;
      if (throttle) {
        const inFlight = this.deps.limiter.jobStats(host, request.job_id)?.active;
        throttle.observe(host, request.job_id, bounds!, throttleOutcome(result.status, refused), startedAt, result.fetchMs, performance.now(), inFlight);
        this.deps.limiter.updatePolicy(host, request.job_id, throttle.policy(host, request.job_id, bounds!));
      }
      // A 503 without Retry-After to an adaptive job lowers its own concurrency; the host-wide pause
      // comes when there is nothing left to lower, or when the site names its pause.
      // The host's shared pause is driven only by answers the host gave: through a tenant's own proxy an
      // answer may be the proxy's (a forged 429 would pause the host for every job), so it steers that
      // job's throttle alone.
      const fromHost = !proxy || proxy.proxy.operator;
      if (fromHost && (result.status === 429 || result.status === 503)) {
        if (!throttle || result.retryAfterMs !== null || steered <= 1) this.deps.limiter.backoff(host, result.retryAfterMs);
      } else if (fromHost && !blocked) this.deps.limiter.succeeded(host);
      if (blocked) {
        // A login wall with no login declared: no retry gets past it, so the page ends now and says what to declare.
        if (blocked.rule === 'login_wall' && !spec.login) throw new LoginRequiredError(`login required: ${blocked.reason}; declare \`login\``, blocked, result.status);
        throw new BlockedError(`blocked: ${blocked.reason} for ${result.finalUrl}`, blocked, result.status);
      }
      // What the responses set is saved before the page's events exist (session-pool.ts).
      await lease?.settle(request.event_id ?? null);
      return result;
    } finally {
      release();
    }
  }

  /** The block verdict on an answer (null: the page itself); a blocked answer is never stored nor parsed. */
  private blockOf(request: FetchWithSpec, spec: CrawlSpec, host: string, result: FetchResult) {
    if (!this.deps.blocks) return null;
    return this.deps.blocks.classify({ jobId: request.job_id, host, status: result.status, body: result.body, isHtml: result.isHtml, bytes: result.bytes, blockPatterns: spec.block_patterns ?? [], url: request.url, finalUrl: result.finalUrl });
  }

  private async finish(request: FetchWithSpec, spec: CrawlSpec, result: FetchResult, options: { signal?: AbortSignal }): Promise<ProcessedPage> {
    const failure = statusError(result);
    if (failure) throw failure;
    if (result.data && this.deps.documents && isPdfType(parseContentType(result.contentType).essence)) return this.document(request, spec, result, options);
    if (!result.isHtml || result.body === null) return { result, links: [], nextPage: null, items: [], parsed: false, cut: null };
    return this.parsed(request, spec, result, options);
  }

  /** A PDF read for its text (fetchPolitely asked for its bytes): derived where pages are parsed, within the parse's limits; no links, no items. */
  private async document(request: FetchWithSpec, spec: CrawlSpec, result: FetchResult, options: { signal?: AbortSignal }): Promise<ProcessedPage> {
    const job: ParseJob = {
      html: '', url: request.url, finalUrl: result.finalUrl, jobId: request.job_id, spec, limits: this.deps.parseLimits ?? DEFAULT_PARSE_LIMITS,
      derive: { mainContent: false }, document: { mediaType: 'application/pdf', data: result.data!, maxPages: this.deps.documents!.pdfMaxPages },
    };
    const page = await this.parse(job, options);
    return { result, links: [], nextPage: null, items: [], parsed: false, cut: null, derived: page.derived ?? null };
  }

  /** One linked file of a page, for the job's downloads (file-download.ts): a fetch of the job like its pages. */
  download(request: FetchWithSpec, url: string, options: { signal?: AbortSignal } = {}): Promise<DownloadedFile | { readonly skipped: string }> {
    return downloadFile(this.deps, request, url, options);
  }

  private async parsed(request: FetchWithSpec, spec: CrawlSpec, result: FetchResult, options: { signal?: AbortSignal }, cache?: ProcessedPage['cache']): Promise<ProcessedPage> {
    const job: ParseJob = {
      html: result.body!, url: request.url, finalUrl: result.finalUrl, jobId: request.job_id, spec, limits: this.deps.parseLimits ?? DEFAULT_PARSE_LIMITS,
      ...(wantsDerived(spec) ? { derive: { mainContent: spec.only_main_content ?? false } } : {}),
    };
    const page = await this.parse(job, options);
    const canonical = page.canonical ?? null;
    const hash = page.simhash ?? null;
    // A near-duplicate's links are followed as ever; its items are held back when they are the original's.
    const near = hash !== null && canonical === null && this.deps.nearDuplicates ? this.deps.nearDuplicates.check(request.job_id, hostOf(request.url), { url: request.url, simhash: hash, items: itemsDigest(page.items) }) : null;
    const items = near?.of && near.sameItems ? [] : page.items;
    return {
      result, links: page.links, nextPage: page.nextPage, canonical, items, parsed: true, cut: page.cut, ...(cache ? { cache } : {}),
      metadata: page.metadata ?? null, simhash: hash, nearDuplicateOf: near?.of ?? null,
      ...(page.derived ? { derived: page.derived } : {}), ...(page.downloads && page.downloads.length > 0 ? { downloads: page.downloads } : {}),
    };
  }
}

/**
 * The stored page as this fetch's result: the entry's final URL, status and type, the stored body;
 * the time and wire bytes are those of the 304 exchange (none for a reuse within max_age).
 */
function reusedResult(url: string, entry: CachedPage, body: string, validators: HttpValidators, exchange: Partial<Pick<FetchResult, 'fetchMs' | 'wireBytes' | 'redirects'>>): FetchResult {
  return {
    url,
    finalUrl: entry.final_url,
    status: entry.status,
    contentType: entry.content_type,
    bytes: Buffer.byteLength(body, 'utf8'),
    wireBytes: exchange.wireBytes ?? 0,
    fetchMs: exchange.fetchMs ?? 0,
    body,
    isHtml: true,
    truncated: false,
    redirects: exchange.redirects ?? [],
    retryAfterMs: null,
    charset: 'utf-8',
    renderMode: 'http',
    validators,
  };
}
