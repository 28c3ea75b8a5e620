import type { CrawlSpec, FetchRequested } from '@trawl/schemas';
import { RobotsDisallowedError } from '../errors.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import { statusError } from '../fetch/status-error.ts';
import type { ExtractedItem } from '../parse/extract-items.ts';
import { parsePage, DEFAULT_PARSE_LIMITS, type PageCut, type ParsedPage, type ParseLimits } from '../parse/parse-page.ts';
import { hostPolicyOf, type HostLimiter } from '../politeness/host-limiter.ts';
import type { RobotsCache } from '../politeness/robots.ts';
import { RulesCache } from './rules-cache.ts';

/** Anything that turns a URL into a FetchResult: HttpFetcher, BrowserFetcher, lazyBrowserFetcher(). */
export interface PageFetcher {
  fetch(url: string, options?: { signal?: AbortSignal }): Promise<FetchResult>;
}

/** One HTML page to parse, with what a parser on another thread needs to compile the job's rules. */
export interface ParseJob {
  readonly html: string;
  readonly url: string;
  readonly finalUrl: string;
  readonly jobId: string;
  readonly spec: CrawlSpec;
  readonly limits: ParseLimits;
}

/** Where parsing runs: in-line by default; the worker can hand it to a thread pool. */
export type ParseStep = (job: ParseJob) => Promise<Pick<ParsedPage, 'links' | 'nextPage' | 'items' | 'cut'>>;

export interface PageProcessorDeps {
  readonly http: PageFetcher;
  /** For `requires_browser` specs; without it such fetches go over plain HTTP. */
  readonly browser?: PageFetcher;
  readonly robots: RobotsCache;
  readonly limiter: HostLimiter;
  readonly rules?: RulesCache;
  readonly parseLimits?: ParseLimits;
  /** Default: parsePage on this thread, with the job's rules compiled once (RulesCache). */
  readonly parse?: ParseStep;
}

/** A page fetched (and parsed when HTML): what PageFetched and ItemExtracted are built from. */
export interface ProcessedPage {
  readonly result: FetchResult;
  /** Links kept by the rules, normalised. */
  readonly links: readonly string[];
  /** The pagination successor, for the frontier to request at the same depth. */
  readonly nextPage: string | null;
  readonly items: readonly ExtractedItem[];
  readonly parsed: boolean;
  /** What the parse limits left out of the page (null: nothing), for the log: events carry no such field. */
  readonly cut: PageCut | null;
}

/**
 * One FetchRequested, start to end, without Kafka: robots.txt, per-host politeness, the fetch (HTTP or
 * browser), status check, parse. Throws a CrawlError: the caller sends retriable ones to the next
 * retry tier and turns the rest (or the last retry) into PageFailed.
 *
 * Error statuses are failures here: a 404 becomes PageFailed (non-retriable), a 5xx/429 a retry. A
 * 429/503 also pauses the host for everyone (Retry-After, else a doubling backoff).
 */
export class PageProcessor {
  private readonly parse: ParseStep;
  constructor(private readonly deps: PageProcessorDeps) {
    const rules = deps.rules ?? new RulesCache();
    this.parse = deps.parse ?? (async (job) => parsePage({ html: job.html, url: job.url, finalUrl: job.finalUrl, rules: rules.get(job.jobId, job.spec), limits: job.limits }));
  }

  async process(request: FetchRequested, options: { signal?: AbortSignal } = {}): Promise<ProcessedPage> {
    const { url, spec } = request;
    const robots = await this.deps.robots.check(url);
    if (!robots.allowed) throw new RobotsDisallowedError(`robots.txt disallows ${url}`);
    const host = new URL(url).host;
    const fetcher = spec.requires_browser && this.deps.browser ? this.deps.browser : this.deps.http;
    const release = await this.deps.limiter.acquire(host, { policy: hostPolicyOf(spec), crawlDelayMs: robots.crawlDelayMs, signal: options.signal });
    let result: FetchResult;
    try {
      result = await fetcher.fetch(url, { signal: options.signal });
    } finally {
      release();
    }
    if (result.status === 429 || result.status === 503) this.deps.limiter.backoff(host, result.retryAfterMs);
    else this.deps.limiter.succeeded(host);
    const failure = statusError(result);
    if (failure) throw failure;
    if (!result.isHtml || result.body === null) return { result, links: [], nextPage: null, items: [], parsed: false, cut: null };
    const page = await this.parse({ html: result.body, url, finalUrl: result.finalUrl, jobId: request.job_id, spec, limits: this.deps.parseLimits ?? DEFAULT_PARSE_LIMITS });
    return { result, links: page.links, nextPage: page.nextPage, items: page.items, parsed: true, cut: page.cut };
  }
}
