import { envInteger } from '../config/env-integer.ts';

/**
 * How much of a site's sitemaps one crawl reads. Every bound is a cost a site could otherwise set:
 * sitemaps are written by the site, so a hostile one could list millions of URLs, nest indexes
 * forever or serve a gzip bomb.
 */
export interface SitemapLimits {
  /** Page URLs a crawl takes from sitemaps (after the crawl rules), per site root and per job (TRAWL_SITEMAP_MAX_URLS). */
  readonly maxUrls: number;
  /** Bytes of one sitemap document, decompressed (TRAWL_SITEMAP_MAX_BYTES): the rest is not read. */
  readonly maxBytes: number;
  /** Index levels followed below the first documents (TRAWL_SITEMAP_MAX_DEPTH): 0 reads no index's children. */
  readonly maxDepth: number;
  /** Sitemap documents fetched per site root (TRAWL_SITEMAP_MAX_DOCUMENTS), the first ones included. */
  readonly maxDocuments: number;
  /** Wall clock of reading one site's sitemaps (TRAWL_SITEMAP_TIME_MS); what was read by then is kept. */
  readonly timeMs: number;
}

/**
 * The defaults. 16 MiB is a third of the 50 MB sitemaps.org allows a document: a 50,000-URL sitemap
 * with lastmod and priority is ~8 MB, and a worker holds a document's bytes and text at once. The
 * time leaves room within the page budget (TRAWL_PAGE_BUDGET_MS, 90 s) for the root page itself.
 */
export const DEFAULT_SITEMAP_LIMITS: SitemapLimits = {
  maxUrls: 10_000,
  maxBytes: 16 * 1024 * 1024,
  maxDepth: 2,
  maxDocuments: 50,
  timeMs: 45_000,
};

/** The limits from the environment (TRAWL_SITEMAP_*), the defaults for what is unset; throws InvalidConfigError naming a bad value. */
export function sitemapLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): SitemapLimits {
  const read = (name: string, dflt: number, min: number): number => envInteger(env, name, dflt, min);
  return {
    maxUrls: read('TRAWL_SITEMAP_MAX_URLS', DEFAULT_SITEMAP_LIMITS.maxUrls, 0),
    maxBytes: read('TRAWL_SITEMAP_MAX_BYTES', DEFAULT_SITEMAP_LIMITS.maxBytes, 1024),
    maxDepth: read('TRAWL_SITEMAP_MAX_DEPTH', DEFAULT_SITEMAP_LIMITS.maxDepth, 0),
    maxDocuments: read('TRAWL_SITEMAP_MAX_DOCUMENTS', DEFAULT_SITEMAP_LIMITS.maxDocuments, 1),
    timeMs: read('TRAWL_SITEMAP_TIME_MS', DEFAULT_SITEMAP_LIMITS.timeMs, 1_000),
  };
}
