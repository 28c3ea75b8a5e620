import type { ItemField, PaginationType } from '@trawl/schemas';
import type { StoredOptions } from './reach.ts';

/** A website: how to crawl and scrape one site. Rows of `websites`. */
export interface Website {
  readonly id: string;
  readonly owner_id: string | null;
  readonly name: string;
  readonly base_url: string;
  readonly requires_browser: boolean;
  readonly pagination_type: PaginationType;
  readonly next_link_selector: string | null;
  readonly page_param: string | null;
  readonly item_root: string | null;
  readonly item_fields: readonly ItemField[];
  /** XPath 1.0 expression of the items, instead of item_root (CSS). */
  readonly item_root_xpath?: string | null;
  /** JSON Schema each item is validated against (after its fields' transforms); as JSON text when it comes from a spec. */
  readonly item_schema?: object | string | null;
  readonly include_patterns: readonly string[];
  readonly exclude_patterns: readonly string[];
  readonly same_host: boolean;
  readonly allowed_hosts: readonly string[];
  readonly max_depth: number;
  readonly max_pages: number;
  readonly host_concurrency: number;
  readonly host_delay_ms: number;
  /** Request options of the website's crawls (@trawl/crawl request-options.ts); a crawl's own win field by field. Absent: none. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly user_agent?: string | null;
  readonly locale?: string | null;
  /** Set-Cookie strings by domain. Credentials, in clear for now (see the README's "Reaching sites"). */
  readonly cookies?: Readonly<Record<string, readonly string[]>>;
  /** CSS selector of the "load more" button (pagination load_more). */
  readonly load_more_selector?: string | null;
  /** Reach options of the website's crawls (proxies, sessions, login, actions, block patterns, throttling, link scope); a crawl's own win option by option. Stored in the `reach` column. */
  readonly reach?: WebsiteReach;
}

/** A website's reach options as stored: credentials sealed, or `{secret}` references resolved at each job's creation. */
export type WebsiteReach = Pick<StoredOptions, 'proxies' | 'proxy_rotation' | 'sessions' | 'login' | 'actions' | 'block_patterns' | 'adaptive_throttle' | 'scope' | 'follow_nofollow' | 'only_main_content' | 'downloads'>;

/** A scrape target: a website, a search URL (or template) and what to search for. */
export interface Target {
  readonly id: string;
  readonly owner_id: string | null;
  readonly website_id: string;
  readonly name: string | null;
  /** A URL, or a template with `{keywords}` and `{location}` placeholders. */
  readonly url_template: string;
  readonly keywords: readonly string[];
  readonly location: string | null;
  readonly active: boolean;
}

/** What an API-submitted scheduled crawl asked for. */
export interface CrawlRequest {
  readonly spider: string | null;
  readonly start_urls: readonly string[];
  readonly depth: number;
  readonly max_pages: number | null;
  readonly params: Readonly<Record<string, string>>;
  /** Content formats to keep (html, text, markdown); absent or empty keeps none. */
  readonly formats?: readonly string[];
  /** Seconds the job's stored content is kept after it ends; absent or null: the server's default. */
  readonly content_retention?: number | null;
  /** Seconds within which a page the user fetched is reused without a request; absent or null: never. */
  readonly max_age?: number | null;
  /** Bypass the HTTP cache (a schedule's runs fetch every page in full); absent: false. */
  readonly ignore_cache?: boolean;
  /** Keep page bodies for the HTTP cache (CrawlSpec.store_in_cache); absent: true for a recurring schedule's runs, false otherwise. */
  readonly store_in_cache?: boolean;
  /** What start URLs that are a site's root do with its sitemaps; absent: `include`. */
  readonly sitemap?: 'include' | 'only' | 'skip';
  /** Request options (@trawl/crawl request-options.ts), over the website's field by field; absent: the website's. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly user_agent?: string;
  readonly locale?: string;
  readonly cookies?: Readonly<Record<string, readonly string[]>>;
  /** Reach options (config/reach.ts), over the website's option by option; absent: the website's. Literal credentials sealed, secrets by name. */
  readonly proxies?: StoredOptions['proxies'];
  readonly proxy_rotation?: StoredOptions['proxy_rotation'];
  readonly sessions?: number;
  readonly login?: StoredOptions['login'];
  readonly actions?: StoredOptions['actions'];
  readonly block_patterns?: readonly string[];
  readonly adaptive_throttle?: boolean;
  readonly include_patterns?: readonly string[];
  readonly exclude_patterns?: readonly string[];
  readonly scope?: StoredOptions['scope'];
  readonly follow_nofollow?: boolean;
  readonly only_main_content?: boolean;
  readonly downloads?: StoredOptions['downloads'];
}

export type ScheduleStatus = 'active' | 'paused' | 'cancelled' | 'done';

export interface Schedule {
  readonly id: string;
  readonly owner_id: string | null;
  readonly target_id: string | null;
  readonly request: CrawlRequest | null;
  readonly cron: string | null;
  readonly interval_ms: number | null;
  readonly run_at: Date | null;
  readonly status: ScheduleStatus;
  readonly last_scheduled: Date | null;
  readonly last_job_id: string | null;
  readonly next_due: Date | null;
  readonly created_at: Date;
  /** Why the dispatcher paused it (a code such as `WEBSITE_GONE`); null when a user paused it, or it runs. */
  readonly paused_reason: string | null;
  readonly paused_message: string | null;
  readonly paused_at: Date | null;
  /** The last slot the dispatcher skipped instead of starting a job, and why (a quota). */
  readonly skipped_at: Date | null;
  readonly skipped_reason: string | null;
  /** IANA time zone its cron expression is read in (default UTC). */
  readonly time_zone: string;
  /** What a slot does while the schedule's previous job is still going (default skip). */
  readonly overlap: OverlapPolicy;
  /**
   * A slot whose request equals a crawl of the owner started within the dedupe TTL (an immediate
   * crawl, or another deduplicated schedule's run) is answered from that job instead of run;
   * a run that starts answers later identical crawls. Schedules of a request only (default false).
   */
  readonly dedupe: boolean;
}

/**
 * A slot that comes while the schedule's previous job is still pending, running or paused:
 * `skip` records the slot as skipped and moves on, `queue` holds it until that job ends (then the
 * latest held slot runs once), `allow` starts it anyway.
 */
export type OverlapPolicy = 'skip' | 'queue' | 'allow';
