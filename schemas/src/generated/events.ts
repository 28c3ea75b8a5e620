// Generated from schemas/avro by src/codegen.ts. Do not edit: run `npm run codegen -w @trawl/schemas`.

/** A scrape target's schedule slot came due; the dispatcher emits JobDispatched for it with the same job_id. */
export interface TargetDue {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  /** Derived from the target/schedule id and the slot: one job per slot. */
  readonly job_id: string;
  readonly target_id: null | string;
  readonly schedule_id: null | string;
  readonly website_id: null | string;
  readonly user_id: null | string;
  /** The due slot this event stands for. */
  readonly slot_at: Date;
}

/** A user asked for a crawl now (the API emits JobDispatched next). */
export interface CrawlRequested {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly user_id: string;
  readonly spider: null | string;
  readonly start_urls: readonly string[];
  readonly depth: number;
  readonly max_pages: null | number;
  readonly params: Readonly<Record<string, string>>;
  readonly dedupe_key: string;
  readonly ignore_cache: boolean;
}

export type PaginationType = 'none' | 'next_link' | 'page_param';

export interface ItemField {
  readonly name: string;
  /** CSS selector inside the item root; empty for the root itself. */
  readonly selector: string;
  /** Attribute to read; null reads the text. */
  readonly attribute: null | string;
}

/** The rules of one crawl, carried with each job and each fetch so that no worker needs a lookup. */
export interface CrawlSpec {
  readonly website_id: null | string;
  readonly website_name: null | string;
  readonly requires_browser: boolean;
  readonly pagination_type: PaginationType;
  /** CSS selector of the next-page link (next_link). */
  readonly next_link_selector: null | string;
  /** Query parameter that numbers pages (page_param). */
  readonly page_param: null | string;
  /** Link hops from a start URL; 0 fetches the start URLs only. */
  readonly max_depth: number;
  readonly max_pages: number;
  readonly same_host: boolean;
  readonly allowed_hosts: readonly string[];
  /** Regular expressions; a link is kept when it matches one (or the list is empty). */
  readonly include_patterns: readonly string[];
  readonly exclude_patterns: readonly string[];
  /** Most fetches in flight to one host at a time. */
  readonly host_concurrency: number;
  /** Least time between two requests to one host (robots.txt crawl-delay may raise it). */
  readonly host_delay_ms: number;
  /** CSS selector of one item; null extracts no items. */
  readonly item_root: null | string;
  readonly item_fields: readonly ItemField[];
}

/** A job was handed to the crawl: everything a worker needs, without a lookup. */
export interface JobDispatched {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly user_id: null | string;
  readonly target_id: null | string;
  readonly schedule_id: null | string;
  /** The first start URL, or the target URL template filled from keywords and location. */
  readonly search_url: string;
  readonly start_urls: readonly string[];
  readonly keywords: readonly string[];
  readonly location: null | string;
  readonly spec: CrawlSpec;
  readonly attempt: number;
}

/** A command to the workers: fetch this URL for this job (key: URL host). */
export interface FetchRequested {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  /** UUIDv5 of job id + normalised URL; the same URL is requested once per job. */
  readonly fetch_id: string;
  /** Normalised URL. */
  readonly url: string;
  readonly depth: number;
  readonly referrer: null | string;
  readonly spec: CrawlSpec;
}

/** How a page was fetched: plain HTTP or headless Chromium. */
export type RenderMode = 'http' | 'browser';

/** A worker fetched (and, when HTML, parsed) a page. */
export interface PageFetched {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly fetch_id: string;
  readonly url: string;
  readonly final_url: string;
  readonly status: number;
  readonly content_type: null | string;
  readonly bytes: number;
  readonly fetch_ms: number;
  readonly render_mode: RenderMode;
  readonly depth: number;
  /** Normalised outgoing links kept by the crawl rules. */
  readonly links: readonly string[];
  /** Pagination successor (next_link or page_param), requested at the same depth and exempt from include/exclude patterns. */
  readonly next_page: null | string;
  readonly item_count: number;
  /** Links kept by the crawl rules but left out of `links` to keep the event under the size limit (TRAWL_MAX_EVENT_BYTES): the frontier never sees them. */
  readonly links_dropped: number;
  /** The body was cut at the size limit. */
  readonly truncated: boolean;
  /** False when the content type was not parsed (e.g. a PDF). */
  readonly parsed: boolean;
  readonly attempt: number;
}

/** A fetch failed for good (after its retry tiers, or at once when not retriable). */
export interface PageFailed {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly fetch_id: string;
  readonly url: string;
  readonly depth: number;
  readonly status: null | number;
  readonly error_code: string;
  readonly error_message: string;
  readonly attempts: number;
  readonly render_mode: RenderMode;
}

/** An item was extracted from a page by the website selectors. */
export interface ItemExtracted {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly fetch_id: string;
  /** Stable: the same item on the same page gets the same key. */
  readonly item_key: string;
  readonly url: string;
  readonly fields: Readonly<Record<string, string>>;
  /** Fields whose values were cut (at a UTF-8 character boundary) to keep the event under the size limit (TRAWL_MAX_EVENT_BYTES). */
  readonly truncated_fields: readonly string[];
}

export type JobOutcome = 'finished' | 'cancelled';

/** The frontier saw no outstanding fetch: the job is over (exactly once). */
export interface JobCompleted {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly outcome: JobOutcome;
  readonly pages_fetched: number;
  readonly pages_failed: number;
  readonly items_extracted: number;
  readonly urls_seen: number;
  readonly started_at: Date;
}

/** The job cannot proceed (e.g. every start URL refused). */
export interface JobFailed {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly error_code: string;
  readonly reason: string;
  readonly pages_fetched: number;
  readonly pages_failed: number;
}

/** A user cancelled a job; the frontier drops its outstanding fetches. */
export interface JobCancelled {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly user_id: null | string;
  readonly reason: null | string;
}

/** Every event type by name. */
export interface EventMap {
  TargetDue: TargetDue;
  CrawlRequested: CrawlRequested;
  JobDispatched: JobDispatched;
  FetchRequested: FetchRequested;
  PageFetched: PageFetched;
  PageFailed: PageFailed;
  ItemExtracted: ItemExtracted;
  JobCompleted: JobCompleted;
  JobFailed: JobFailed;
  JobCancelled: JobCancelled;
}
