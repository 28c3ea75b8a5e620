import type { CrawlSpec } from '@trawl/schemas';
import { errorCode } from '../errors.ts';
import type { FetchOptions } from '../fetch/http-fetcher.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import { hostPolicyOf, type HostLimiter } from '../politeness/host-limiter.ts';
import type { RobotsCache } from '../politeness/robots.ts';
import type { ProxyEndpoint } from '../proxy/proxy-pool.ts';
import { requestProfileOf, type RequestProfile } from '../request/request-profile.ts';
import { hostOf, type CrawlRules } from '../rules/crawl-rules.ts';
import { normaliseUrlOrNull } from '../url/normalise.ts';
import { sitemapBody } from './sitemap-body.ts';
import { DEFAULT_SITEMAP_LIMITS, type SitemapLimits } from './sitemap-limits.ts';
import { parseSitemap } from './sitemap-parser.ts';

/** The safe HTTP fetcher (HttpFetcher): sitemaps obey the same egress rules as pages. */
export interface SitemapFetcher {
  fetch(url: string, options?: FetchOptions): Promise<FetchResult>;
}

export interface SitemapReaderDeps {
  readonly http: SitemapFetcher;
  readonly robots: RobotsCache;
  readonly limiter: HostLimiter;
  readonly limits?: SitemapLimits;
}

/** What became of one sitemap document, for the log. */
export interface SitemapDocument {
  readonly url: string;
  readonly outcome: 'read' | 'skipped' | 'failed';
  /** Why it was skipped or failed, or what cut it short; null when read whole. */
  readonly reason: string | null;
  /** Locs it listed (page URLs or sitemaps), before the crawl rules. */
  readonly locs: number;
}

/** A site's sitemaps, read for one crawl. */
export interface SitemapDiscovery {
  /** Normalised page URLs kept by the crawl rules, deduplicated, in the order read, at most maxUrls. */
  readonly urls: readonly string[];
  /** URLs kept by the rules but past maxUrls (as far as they were read: reading stops at the limit). */
  readonly dropped: number;
  readonly documents: readonly SitemapDocument[];
}

/** Whether a fetch is a site's root for sitemap discovery: the path `/` with no query. */
export function isSiteRoot(url: string): boolean {
  try {
    const u = new URL(url);
    return u.pathname === '/' && u.search === '';
  } catch {
    return false;
  }
}

/** Whether the worker reads the sitemaps of this fetch: a start URL (depth 0) that is a site's root, for a crawl that wants them. */
export function wantsSitemaps(request: { readonly url: string; readonly depth: number; readonly spec: Pick<CrawlSpec, 'sitemap'> }): boolean {
  return request.depth === 0 && (request.spec.sitemap ?? 'include') !== 'skip' && isSiteRoot(request.url);
}

/**
 * Finds a site's page URLs in its sitemaps: the robots.txt `Sitemap:` lines, else `/sitemap.xml`;
 * indexes followed breadth first to `maxDepth`; gzip sitemaps inflated; everything bounded
 * (SitemapLimits). Best effort by design: a sitemap that is missing, refused, malformed or cut is
 * noted in `documents` and the others are still read; nothing here fails the page it came with.
 *
 * Each document goes through the safe HTTP fetcher (the egress rules: a sitemap at a private address
 * is refused like a page there), robots.txt and the host's politeness slot, and never through the
 * HTTP cache: it is neither looked up (no conditional request) nor stored; the job's request options
 * (headers, user agent, cookies) go with it as with its pages. A sitemap on a host the
 * crawl's host rules do not allow is not fetched; the URLs are kept only when the crawl rules keep
 * them as links of the root page (host, include/exclude patterns, trap guards). Depth and max_pages
 * are the frontier's, which requests them like links.
 */
export class SitemapReader {
  readonly limits: SitemapLimits;
  constructor(private readonly deps: SitemapReaderDeps) {
    this.limits = deps.limits ?? DEFAULT_SITEMAP_LIMITS;
  }

  async discover(rootUrl: string, spec: CrawlSpec, rules: CrawlRules, options: { jobId: string; signal?: AbortSignal; proxy?: ProxyEndpoint | null }): Promise<SitemapDiscovery> {
    const limits = this.limits;
    const urls = new Set<string>();
    let dropped = 0;
    const documents: SitemapDocument[] = [];
    if (limits.maxUrls <= 0) return { urls: [], dropped, documents };
    const timer = AbortSignal.timeout(limits.timeMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timer]) : timer;
    const rootHost = hostOf(rootUrl);
    const request = requestProfileOf(spec);
    // Through the job's proxy when it has one, robots.txt included: a crawl that asked for proxies sends nothing direct.
    const proxy = options.proxy ?? null;
    const queue = (await this.firstSitemaps(rootUrl, request, proxy)).map((url) => ({ url, depth: 0 }));
    const visited = new Set<string>();
    let fetched = 0;

    while (queue.length > 0 && urls.size < limits.maxUrls) {
      const { url: raw, depth } = queue.shift()!;
      const url = normaliseUrlOrNull(raw, rootUrl);
      if (url === null) {
        documents.push({ url: raw, outcome: 'skipped', reason: 'not an http(s) URL', locs: 0 });
        continue;
      }
      if (visited.has(url)) continue;
      visited.add(url);
      if (!rules.isHostAllowed(hostOf(url), rootHost) || rules.checkTrap(url) !== null) {
        documents.push({ url, outcome: 'skipped', reason: 'off host: the crawl rules do not allow its host', locs: 0 });
        continue;
      }
      if (fetched >= limits.maxDocuments) {
        documents.push({ url, outcome: 'skipped', reason: `over ${limits.maxDocuments} sitemap documents (TRAWL_SITEMAP_MAX_DOCUMENTS)`, locs: 0 });
        continue;
      }
      if (signal.aborted) {
        documents.push({ url, outcome: 'skipped', reason: timer.aborted ? `out of time (${limits.timeMs} ms, TRAWL_SITEMAP_TIME_MS)` : 'aborted', locs: 0 });
        if (options.signal?.aborted) throw options.signal.reason;
        continue;
      }
      fetched++;
      let data: Uint8Array;
      let truncated: boolean;
      try {
        const result = await this.fetchPolitely(url, spec, request, options.jobId, signal, proxy);
        if (result.status < 200 || result.status > 299 || !result.data) {
          documents.push({ url, outcome: 'failed', reason: `HTTP ${result.status}`, locs: 0 });
          continue;
        }
        data = result.data;
        truncated = result.truncated;
      } catch (err) {
        // The page's own deadline ends the page, not just its sitemaps.
        if (options.signal?.aborted) throw err;
        documents.push({ url, outcome: 'failed', reason: `${errorCode(err)}: ${(err as Error).message}`, locs: 0 });
        continue;
      }
      const body = await sitemapBody(data, limits.maxBytes);
      const parsed = await parseSitemap(body.text);
      const cut = truncated || body.cut ? `cut at ${limits.maxBytes} bytes (TRAWL_SITEMAP_MAX_BYTES)` : null;
      const problem = body.error ?? parsed.error;
      const reason = [cut, problem?.message].filter((r) => r).join('; ') || null;
      documents.push({ url, outcome: problem && parsed.locs.length === 0 ? 'failed' : 'read', reason, locs: parsed.locs.length + parsed.locsOver });

      if (parsed.kind === 'sitemapindex') {
        if (depth >= limits.maxDepth) {
          if (parsed.locs.length > 0) documents.push({ url, outcome: 'skipped', reason: `its ${parsed.locs.length} sitemaps are past the nesting limit (${limits.maxDepth}, TRAWL_SITEMAP_MAX_DEPTH)`, locs: 0 });
          continue;
        }
        for (const loc of parsed.locs) queue.push({ url: loc, depth: depth + 1 });
        continue;
      }
      for (const loc of parsed.locs) {
        const page = normaliseUrlOrNull(loc, url);
        if (page === null || urls.has(page) || rules.check(page, rootUrl) !== null) continue;
        if (urls.size < limits.maxUrls) urls.add(page);
        else dropped++;
      }
    }
    return { urls: [...urls], dropped, documents };
  }

  /** The robots.txt `Sitemap:` lines of the root's origin, else its /sitemap.xml. */
  private async firstSitemaps(rootUrl: string, request: RequestProfile | null, proxy: ProxyEndpoint | null): Promise<string[]> {
    const origin = new URL(rootUrl).origin;
    try {
      const rules = await this.deps.robots.rulesFor(origin, { request, proxy });
      if (rules.sitemaps.length > 0) return [...rules.sitemaps];
    } catch {
      // robots.txt unreadable now: the page itself was fetched, so its conventional sitemap is tried.
    }
    return [`${origin}/sitemap.xml`];
  }

  /** robots.txt and the host's politeness slot, as for a page; the bytes as sent, never the HTTP cache. */
  private async fetchPolitely(url: string, spec: CrawlSpec, request: RequestProfile | null, jobId: string, signal: AbortSignal, proxy: ProxyEndpoint | null): Promise<FetchResult> {
    const verdict = await this.deps.robots.assertAllowed(url, { request, proxy });
    const host = new URL(url).host;
    const release = await this.deps.limiter.acquire(host, { jobId, policy: hostPolicyOf(spec), crawlDelayMs: verdict.crawlDelayMs, signal });
    try {
      const result = await this.deps.http.fetch(url, {
        signal,
        accept: 'bytes',
        maxBodyBytes: this.limits.maxBytes,
        oversize: 'truncate',
        headers: { accept: 'application/xml,text/xml;q=0.9,*/*;q=0.5' },
        request,
        ...(proxy ? { proxy } : {}),
      });
      if (result.status === 429 || result.status === 503) this.deps.limiter.backoff(host, result.retryAfterMs);
      else this.deps.limiter.succeeded(host);
      return result;
    } finally {
      release();
    }
  }
}
