import type { CrawlSpec } from '@trawl/schemas';
import { mergeReachOptions, mergeRequestOptions, type RequestOptions } from '@trawl/schemas';
import { sealCredentials, type SecretLookup } from '../secrets/seal-credentials.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { StoredOptions } from './reach.ts';
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
   * Request and reach options with their credentials resolved, least specific first (the
   * website's, a schedule's stored request, the crawl's own): each field of the last layer that
   * sets it wins (mergeRequestOptions, mergeReachOptions). {@link resolvedSpec} builds them from
   * what is stored; without them the spec has none (the website's selectors and politeness apply
   * either way).
   */
  readonly request?: readonly (RequestOptions | null | undefined)[];
}

/**
 * The rules a job carries. A website (a "spider" in the API) gives selectors, pagination and
 * politeness; a plain crawl of start URLs gets the defaults: same host, links only, no items.
 * The job's own depth and max_pages win over the website's, its request options (headers, user
 * agent, locale, cookies) over the website's field by field, and its reach options (proxies,
 * sessions, login, actions, block patterns, link rules…) over the website's option by option.
 */
export function crawlSpec(website: Website | null | undefined, limits: SpecLimits = {}): CrawlSpec {
  const spec: CrawlSpec = {
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
    host_concurrency: website?.host_concurrency ?? 8,
    host_delay_ms: website?.host_delay_ms ?? 0,
    item_root: website?.item_root ?? null,
    // Stored fields written before XPath and transforms lack them.
    item_fields: (website?.item_fields ?? []).map((f) => ({ name: f.name, selector: f.selector ?? '', attribute: f.attribute ?? null, xpath: f.xpath ?? null, transforms: f.transforms ?? [] })),
    item_root_xpath: website?.item_root_xpath ?? null,
    item_schema: typeof website?.item_schema === 'string' ? website.item_schema : website?.item_schema ? JSON.stringify(website.item_schema) : null,
    formats: limits.formats ?? [],
    max_age: limits.max_age ?? null,
    ignore_cache: limits.ignore_cache ?? false,
    store_in_cache: limits.store_in_cache ?? false,
    // Set only by a re-extraction (the API's reextract), over the source job's own spec.
    reextract_of: null,
    sitemap: limits.sitemap ?? 'include',
    ...mergeRequestOptions(...(limits.request ?? [])),
    // Proxies, sessions, login, actions, blocks, throttling and link rules: the last layer's that sets each.
    ...mergeReachOptions(...(limits.request ?? [])),
    load_more_selector: website?.load_more_selector ?? null,
    honour_canonical: true,
  };
  // Actions, a scrolled or load-more list, a screenshot or a PDF are the browser's to do (the
  // worker's needsBrowser in @trawl/crawl reads the same fields): the spec says so, for every reader.
  const rendered = spec.actions.length > 0 || spec.pagination_type === 'infinite_scroll' || spec.pagination_type === 'load_more' || spec.formats.includes('screenshot') || spec.formats.includes('pdf');
  return rendered && !spec.requires_browser ? { ...spec, requires_browser: true } : spec;
}

/** A website's request and reach options as one stored layer (the first of a job's). */
export function websiteLayer(website: Website): StoredOptions {
  return {
    ...(website.headers ? { headers: website.headers } : {}),
    user_agent: website.user_agent ?? null,
    locale: website.locale ?? null,
    ...(website.cookies ? { cookies: website.cookies } : {}),
    ...website.reach,
    include_patterns: website.include_patterns,
    exclude_patterns: website.exclude_patterns,
  };
}

/** One layer of a job's options and where it comes from: `stored` (a website, a schedule's request: literals sealed already) or `request` (a crawl's body: every string a literal). */
export interface OptionsLayer {
  readonly options: StoredOptions | null | undefined;
  readonly from: 'stored' | 'request';
}

/** How a job's credentials are sealed: the secrets' box and the job's user's secrets. */
export interface SpecSealing {
  readonly box: SecretBox;
  readonly lookup?: SecretLookup;
}

/**
 * A job's option layers — the website's, then `layers` (a schedule's stored request, the crawl's
 * own) — each with every credential sealed and `{secret}` names resolved (UnknownSecretError for a
 * name the user has no secret of): what crawlSpec's `request` takes.
 */
export async function sealedLayers(website: Website | null | undefined, layers: readonly OptionsLayer[], sealing: SpecSealing): Promise<(RequestOptions | null)[]> {
  const all: OptionsLayer[] = [{ options: website ? websiteLayer(website) : null, from: 'stored' }, ...layers];
  return Promise.all(all.map(async ({ options, from }) => (options ? ((await sealCredentials(options, { ...sealing, from })).sealed as RequestOptions) : null)));
}

/** The spec of a job, its option layers sealed ({@link sealedLayers}). */
export async function resolvedSpec(
  website: Website | null | undefined,
  limits: Omit<SpecLimits, 'request'>,
  layers: readonly OptionsLayer[],
  sealing: SpecSealing,
): Promise<CrawlSpec> {
  return crawlSpec(website, { ...limits, request: await sealedLayers(website, layers, sealing) });
}
