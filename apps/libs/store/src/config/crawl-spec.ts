import type { CrawlSpec } from '@trawl/schemas';
import { mergeRequestOptions, type RequestOptions } from '@trawl/schemas';
import type { Website } from './types.ts';

export const DEFAULT_MAX_PAGES = 1000;

export interface SpecLimits {
  readonly depth?: number | null;
  readonly max_pages?: number | null;
  /** Content formats to keep (html, text, markdown); default none. */
  readonly formats?: readonly string[] | null;
  /** Seconds within which a page the user fetched is reused without a request (POST /crawl `max_age`); default never. */
  readonly max_age?: number | null;
  /** Bypass the HTTP cache (POST /crawl `ignore_cache`); default false. */
  readonly ignore_cache?: boolean | null;
  /** Keep page bodies for the HTTP cache (POST /crawl `store_in_cache`); default false (a recurring schedule's runs pass true). */
  readonly store_in_cache?: boolean | null;
  /** What start URLs that are a site's root do with its sitemaps (POST /crawl `sitemap`); default include. */
  readonly sitemap?: CrawlSpec['sitemap'] | null;
  /**
   * Request options over the website's, least specific first (a schedule's stored request, then
   * the crawl's own): each field of the last layer that sets it wins (mergeRequestOptions).
   */
  readonly request?: readonly (RequestOptions | null | undefined)[];
}

/**
 * The rules a job carries. A website (a "spider" in the API) gives selectors, pagination and
 * politeness; a plain crawl of start URLs gets the defaults: same host, links only, no items.
 * The job's own depth and max_pages win over the website's, and its request options (headers,
 * user agent, locale, cookies) over the website's field by field.
 */
export function crawlSpec(website: Website | null | undefined, limits: SpecLimits = {}): CrawlSpec {
  return {
    website_id: website?.id ?? null,
    website_name: website?.name ?? null,
    requires_browser: website?.requires_browser ?? false,
    pagination_type: website?.pagination_type ?? 'none',
    next_link_selector: website?.next_link_selector ?? null,
    page_param: website?.page_param ?? null,
    max_depth: limits.depth ?? website?.max_depth ?? 1,
    max_pages: limits.max_pages ?? website?.max_pages ?? DEFAULT_MAX_PAGES,
    same_host: website?.same_host ?? true,
    allowed_hosts: website?.allowed_hosts ?? [],
    include_patterns: website?.include_patterns ?? [],
    exclude_patterns: website?.exclude_patterns ?? [],
    host_concurrency: website?.host_concurrency ?? 8,
    host_delay_ms: website?.host_delay_ms ?? 0,
    item_root: website?.item_root ?? null,
    item_fields: website?.item_fields ?? [],
    formats: limits.formats ?? [],
    max_age: limits.max_age ?? null,
    ignore_cache: limits.ignore_cache ?? false,
    store_in_cache: limits.store_in_cache ?? false,
    sitemap: limits.sitemap ?? 'include',
    ...mergeRequestOptions(website, ...(limits.request ?? [])),
  };
}
