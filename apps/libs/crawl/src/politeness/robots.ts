import { CrawlError, DnsNotFoundError, RobotsDisallowedError, RobotsUnavailableError, UnsafeAddressError } from '../errors.ts';
import type { FetchOptions } from '../fetch/http-fetcher.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import type { RequestProfile } from '../request/request-profile.ts';
import { ProxyConnectError, type ProxyEndpoint } from '../proxy/proxy-pool.ts';
import { ALLOW_ALL, MAX_ROBOTS_BYTES, parseRobots, type RobotsRules } from './robots-parser.ts';

/** Anything that fetches like HttpFetcher: robots.txt goes through the same safe, pooled fetcher as pages. */
export interface RobotsFetcher {
  fetch(url: string, options?: FetchOptions): Promise<FetchResult>;
}

export interface RobotsCacheOptions {
  /** Product token matched against User-agent lines: the operator's (userAgentFromEnv), whatever user agent a crawl sends; `Trawl` by default. */
  readonly productToken?: string;
  /** How long a fetched robots.txt is trusted (RFC 9309: at most 24 h). */
  readonly ttlMs?: number;
  /** How long an unreachable robots.txt (5xx, network) keeps the origin waiting before it is asked again. */
  readonly errorTtlMs?: number;
  /** Origins kept; the least recently used go first. */
  readonly maxOrigins?: number;
  /**
   * Characters of robots.txt kept, all origins together (RobotsRules.size); the least recently used
   * go first. A file may be 500 KiB, so the origin count alone bounds nothing: 10,000 sites (or
   * subdomains of one) serving the largest would hold gigabytes.
   */
  readonly maxChars?: number;
  readonly now?: () => number;
}

export interface RobotsVerdict {
  readonly allowed: boolean;
  readonly crawlDelayMs: number | null;
}

/** How robots.txt is fetched for a job: with its request options (a site that answers only with them answers robots.txt only with them). */
export interface RobotsRequestOptions {
  readonly request?: RequestProfile | null;
  /** The job's proxy for this fetch (proxy-pool.ts); robots.txt is the site's whichever way it is read, so the cache does not key on it. */
  readonly proxy?: ProxyEndpoint | null;
}

type Entry = { at: number; ttl: number; rules: RobotsRules | null; error: CrawlError | null; pending: Promise<RobotsRules> | null };

/**
 * robots.txt per origin, fetched once and cached. 2xx: parsed. 4xx (but 429): no rules, all allowed
 * (RFC 9309 §2.3.1.3). 5xx, 429, network errors: the origin is "unreachable" and nothing may be
 * fetched from it for now: a retriable RobotsUnavailableError, itself cached for `errorTtlMs` so a
 * burst of fetches does not hammer a failing server. An origin that is refused by the safety policy or
 * does not resolve fails the same way its pages would (non-retriable).
 *
 * A job with request options fetches robots.txt with them (its headers, user agent, cookies), and
 * its answer is kept apart, under the origin and the options' fingerprint: what a site tells one
 * tenant's cookies is not what it tells everyone, nor the other way round.
 */
export class RobotsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly productToken: string;
  private readonly ttlMs: number;
  private readonly errorTtlMs: number;
  private readonly maxOrigins: number;
  private readonly maxChars: number;
  /** Sum of the kept entries' RobotsRules.size. */
  private chars = 0;
  private readonly now: () => number;

  constructor(
    private readonly fetcher: RobotsFetcher,
    options: RobotsCacheOptions = {},
  ) {
    this.productToken = options.productToken ?? 'Trawl';
    this.ttlMs = options.ttlMs ?? 24 * 3600_000;
    this.errorTtlMs = options.errorTtlMs ?? 60_000;
    this.maxOrigins = options.maxOrigins ?? 10_000;
    this.maxChars = options.maxChars ?? 32 * 1024 * 1024;
    this.now = options.now ?? Date.now;
  }

  /** Whether `url` may be fetched, and the origin's crawl-delay. Throws RobotsUnavailableError (retriable) when robots.txt cannot be read. */
  async check(url: string, options: RobotsRequestOptions = {}): Promise<RobotsVerdict> {
    const u = new URL(url);
    const rules = await this.rulesFor(u.origin, options);
    return { allowed: rules.isAllowed(u.pathname + u.search), crawlDelayMs: rules.crawlDelayMs };
  }

  /** As check(), but throws RobotsDisallowedError when disallowed. */
  async assertAllowed(url: string, options: RobotsRequestOptions = {}): Promise<RobotsVerdict> {
    const verdict = await this.check(url, options);
    if (!verdict.allowed) throw new RobotsDisallowedError(`robots.txt disallows ${url}`);
    return verdict;
  }

  async rulesFor(origin: string, options: RobotsRequestOptions = {}): Promise<RobotsRules> {
    const request = options.request ?? null;
    const proxy = options.proxy ?? null;
    // Read through a proxy, robots.txt is what that proxy answered: kept apart, so a tenant's proxy
    // (which may answer anything) never decides robots.txt for another tenant's crawls.
    const viaProxy = proxy ? `@${proxy.scheme}//${proxy.label}` : '';
    const key = (request?.key ? `${origin}#${request.key}` : origin) + viaProxy;
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.pending) return hit.pending;
      if (now - hit.at < hit.ttl) {
        this.entries.delete(key); // move to the back: least recently used goes first
        this.entries.set(key, hit);
        if (hit.error) throw hit.error;
        return hit.rules!;
      }
    }
    const entry: Entry = { at: now, ttl: this.ttlMs, rules: null, error: null, pending: null };
    entry.pending = this.load(origin, request, proxy).then(
      (rules) => {
        Object.assign(entry, { rules, pending: null, at: this.now() });
        if (this.entries.get(key) === entry) {
          this.chars += rules.size;
          this.evict();
        }
        return rules;
      },
      (err: CrawlError) => {
        const permanent = err instanceof UnsafeAddressError || err instanceof DnsNotFoundError;
        // The proxy failed, not the site: nothing to remember (the next attempt may take another proxy).
        const ttl = err instanceof ProxyConnectError ? 0 : permanent ? this.ttlMs : this.errorTtlMs;
        Object.assign(entry, { error: err, pending: null, at: this.now(), ttl });
        throw err;
      },
    );
    this.forget(key);
    this.entries.set(key, entry);
    this.evict();
    return entry.pending;
  }

  private async load(origin: string, request: RequestProfile | null, proxy: ProxyEndpoint | null): Promise<RobotsRules> {
    let res: FetchResult;
    try {
      res = await this.fetcher.fetch(`${origin}/robots.txt`, { accept: 'text', maxBodyBytes: MAX_ROBOTS_BYTES, oversize: 'truncate', ...(request ? { request } : {}), ...(proxy ? { proxy } : {}) });
    } catch (err) {
      if (err instanceof UnsafeAddressError || err instanceof DnsNotFoundError || err instanceof ProxyConnectError) throw err;
      throw new RobotsUnavailableError(`robots.txt of ${origin} could not be fetched`, { cause: err });
    }
    if (res.status >= 200 && res.status < 300) return parseRobots(res.body ?? '', this.productToken);
    if (res.status === 429 || res.status >= 500) throw new RobotsUnavailableError(`robots.txt of ${origin} answered ${res.status}`);
    return ALLOW_ALL;
  }

  /** Characters of robots.txt kept (for tests and metrics). */
  get keptChars(): number {
    return this.chars;
  }

  private forget(origin: string): void {
    const e = this.entries.get(origin);
    if (!e) return;
    this.chars -= e.rules?.size ?? 0;
    this.entries.delete(origin);
  }

  private evict(): void {
    if (this.entries.size <= this.maxOrigins && this.chars <= this.maxChars) return;
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.maxOrigins && this.chars <= this.maxChars) break;
      if (!e.pending) this.forget(key);
    }
  }
}
