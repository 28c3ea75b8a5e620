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
  /** The job whose failed pages this job fetches again (POST /jobs/:id/retry-failed). */
  readonly retry_of: null | string;
  /** include, only or skip: what the crawl does with the sitemaps of a start URL that is a site's root (CrawlSpec.sitemap). */
  readonly sitemap: string;
}

export type PaginationType = 'none' | 'next_link' | 'page_param' | 'infinite_scroll' | 'load_more';

export type FieldTransformType = 'trim' | 'number' | 'date' | 'absolute_url' | 'regex';

export interface FieldTransform {
  readonly type: FieldTransformType;
  /** regex: an RE2 pattern; the value becomes its first capture group (or the whole match without one). */
  readonly pattern: null | string;
}

export interface ItemField {
  readonly name: string;
  /** CSS selector inside the item root; empty for the root itself. */
  readonly selector: string;
  /** Attribute to read; null reads the text. */
  readonly attribute: null | string;
  /** XPath 1.0 expression from the item root, read instead of selector: its first node (an element's text or attribute, an attribute's value) or its string value. */
  readonly xpath: null | string;
  /** Applied in order to the value read, before the item schema validates the item. */
  readonly transforms: readonly FieldTransform[];
}

export type SitemapMode = 'include' | 'only' | 'skip';

export type LinkScope = 'same_host' | 'same_domain' | 'any';

export interface ProxySpec {
  /** http://, https:// or socks5:// host and port, without credentials. */
  readonly url: string;
  /** Sealed (tsec1.…): the proxy's user name, from the user's secrets or the request. */
  readonly username: null | string;
  /** Sealed (tsec1.…): the proxy's password, from the user's secret named by the request. */
  readonly password: null | string;
}

export type ProxyRotation = 'round_robin' | 'random' | 'per_session';

export type BrowserActionType = 'wait_for' | 'click' | 'scroll' | 'type' | 'press' | 'wait' | 'screenshot';

export interface BrowserAction {
  readonly type: BrowserActionType;
  readonly selector: null | string;
  /** type: the text; sealed (tsec1.…) when it came from a secret. */
  readonly text: null | string;
  /** press: a key name (Enter, Tab…). */
  readonly key: null | string;
  /** wait: how long; others: the action's own time limit. */
  readonly ms: null | number;
  /** scroll: how many times (default until no new content or the selector appears). */
  readonly times: null | number;
  /** screenshot: the whole page rather than the viewport. */
  readonly full_page: boolean;
}

export type LoginKind = 'form' | 'browser';

export interface LoginSpec {
  readonly kind: LoginKind;
  /** The login page. */
  readonly url: string;
  /** form: CSS selector of the form (default: the first form with a password field). */
  readonly form_selector: null | string;
  /** form: field name → value, each sealed (tsec1.…), merged over the form's own (hidden) fields. */
  readonly fields: Readonly<Record<string, string>>;
  /** browser: the actions that log in, run on the login page. */
  readonly actions: readonly BrowserAction[];
  /** Logged in when the page after the login has an element matching it. */
  readonly success_selector: null | string;
  /** Logged in when the URL after the login matches this RE2 pattern. */
  readonly success_url_pattern: null | string;
  /** Not logged in when the page after the login contains this text. */
  readonly failure_text: null | string;
}

export interface DownloadSpec {
  /** Media types of the linked files to keep (`application/pdf`, `image/*`): a link is fetched when its extension names one, kept when its Content-Type is one. */
  readonly types: readonly string[];
  /** A file larger than this is not kept. */
  readonly max_bytes: number;
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
  /** CSS selector of one item; null (and no item_root_xpath) extracts no items. */
  readonly item_root: null | string;
  readonly item_fields: readonly ItemField[];
  /** XPath 1.0 expression selecting the items, used when item_root is null. */
  readonly item_root_xpath: null | string;
  /** JSON Schema (as JSON text) each item is validated against after its fields' transforms; an item that fails it is kept with its errors. */
  readonly item_schema: null | string;
  /** Content formats to keep of each HTML page (html, text, markdown) in the content store; empty keeps none. */
  readonly formats: readonly string[];
  /** Seconds: a page the job's user fetched this recently is reused from the HTTP cache without a request (its stored body parsed again). Null: never reused without asking the site. */
  readonly max_age: null | number;
  /** Bypass the HTTP cache: no reuse within max_age, no conditional request; every page is fetched in full (and still recorded in the cache). */
  readonly ignore_cache: boolean;
  /** Keep each whole HTML page's body in the content store for the HTTP cache, so that a later crawl by the same user can revalidate it (a 304 reuses it) or reuse it within max_age. The API sets it true for a recurring schedule's runs and false otherwise unless the request says; events written before the field read true, as the HTTP cache then stored every page. */
  readonly store_in_cache: boolean;
  /** Set on a re-extraction (POST /jobs/:id/reextract): the finished job whose stored pages this job parses again under its own extraction rules. Nothing is fetched: the frontier requests the source job's fetched pages (never a link), each with the stored body it was parsed from, and the worker reads that body from the content store instead of the network; a page without one fails NOT_STORED. Null: an ordinary crawl. */
  readonly reextract_of: null | string;
  /** What a start URL that is a site's root does with the site's sitemaps (robots.txt Sitemap lines, else /sitemap.xml): include adds their URLs to the crawl, only crawls them and the start URLs without following links, skip ignores them. */
  readonly sitemap: SitemapMode;
  /** Request headers sent with every page, robots.txt and sitemap request of the job, HTTP and browser alike (checked by the API: no Host, hop-by-hop or CR/LF). Authorization is dropped on a redirect to another origin. */
  readonly headers: Readonly<Record<string, string>>;
  /** User-Agent of the job's requests; null: the operator's (TRAWL_USER_AGENT). robots.txt is matched against the operator's product token either way. */
  readonly user_agent: null | string;
  /** A BCP 47 language tag: the Accept-Language of the job's requests and the browser's locale; null: the default Accept-Language. */
  readonly locale: null | string;
  /** Initial cookies by domain: Set-Cookie strings (RFC 6265), each sent only to the URLs it matches (domain, path, Secure). Credentials: see the README's secrets note. */
  readonly cookies: Readonly<Record<string, readonly string[]>>;
  /** CSS selector of the button that loads more of a list (pagination load_more); clicked until it is gone or nothing new appears, within the page budget. */
  readonly load_more_selector: null | string;
  /** Which links are followed: the start URL's host, its registrable domain, or any host. Null: from same_host (true → same_host, false → any), as before the field existed. */
  readonly scope: null | LinkScope;
  /** Follow links marked rel=nofollow. The API sets false unless the request says; events written before the field read true, as links were then followed whatever their rel. */
  readonly follow_nofollow: boolean;
  /** A page whose rel=canonical URL (same host) was already seen by the job is a duplicate: counted, its items not extracted again. The API sets true; events written before the field read false. */
  readonly honour_canonical: boolean;
  /** Proxies the job's requests go through (empty: direct, or the operator's TRAWL_PROXY_URL). */
  readonly proxies: readonly ProxySpec[];
  readonly proxy_rotation: ProxyRotation;
  /** Size of the job's session pool: each session has its own cookie jar (and, with proxies, a sticky proxy). 0: no sessions (each request carries only the spec's cookies). */
  readonly sessions: number;
  /** Browser actions run in order after navigation and before extraction (implies the browser). */
  readonly actions: readonly BrowserAction[];
  /** A login run once per session before its first page (needs sessions ≥ 1); a failed one fails the job LOGIN_FAILED. */
  readonly login: null | LoginSpec;
  /** RE2 patterns: a page whose body matches one is BLOCKED (not stored, retried on another session). */
  readonly block_patterns: readonly string[];
  /** Adapt each host's delay and concurrency to its latency and errors (AutoThrottle), never above host_concurrency nor below host_delay_ms / Crawl-delay. */
  readonly adaptive_throttle: boolean;
  /** The text and markdown formats hold the page's main content (Mozilla Readability: navigation, headers, footers and ads dropped) rather than its whole body. */
  readonly only_main_content: boolean;
  /** Linked files (links, images) each page's fetch also fetches and keeps in the content store by their hash (PageFetched.downloads). Null: none. */
  readonly downloads: null | DownloadSpec;
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
  /** The request's params: template values for the website's selectors ({{name}}). */
  readonly params: Readonly<Record<string, string>>;
}

/** What the job's user's HTTP cache (projector-pg's http_cache) held for this URL when the frontier requested it. */
export interface CachedPage {
  /** sha-256 (hex) of the stored body, its key in the content store. */
  readonly content_hash: string;
  /** When the body was last fetched or revalidated (the PageFetched's occurred_at). */
  readonly fetched_at: Date;
  readonly final_url: string;
  readonly status: number;
  readonly content_type: null | string;
  /** Sent back as If-None-Match. */
  readonly etag: null | string;
  /** Sent back as If-Modified-Since. */
  readonly last_modified: null | string;
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
  /** The job's spec inline: events written before spec_hash existed carry it; new ones leave it null and carry spec_hash. */
  readonly spec: null | CrawlSpec;
  /** SHA-256 (hex) of the job's canonical spec, stored in Postgres (crawl_specs) before this event is produced: the spec by reference. */
  readonly spec_hash: null | string;
  /** The request's params: template values for the website's selectors ({{name}}). */
  readonly params: Readonly<Record<string, string>>;
  /** The cache entry the worker may reuse (within CrawlSpec.max_age) or revalidate (a conditional request); null: none, or the job bypasses the cache. */
  readonly cached: null | CachedPage;
  /** The job's user (JobDispatched.user_id): the worker shares its fetch slots, browser tabs and parse threads between users, then between a user's jobs. Null: written before it, or a job without one; the job is then a tenant of its own. */
  readonly user_id: null | string;
}

/** How a page was fetched: plain HTTP or headless Chromium. */
export type RenderMode = 'http' | 'browser';

export interface StoredFormat {
  /** html, text or markdown. */
  readonly format: string;
  /** sha-256 (hex) of the format's bytes, its key in the content store. */
  readonly hash: string;
  /** Uncompressed size. */
  readonly bytes: number;
}

/** not_modified: a conditional request answered 304; max_age: reused within CrawlSpec.max_age without a request. */
export type CacheReuse = 'not_modified' | 'max_age';

export interface StoredDownload {
  /** The file's URL, as linked (normalised). */
  readonly url: string;
  /** sha-256 (hex) of the file's bytes, its key in the content store. */
  readonly sha256: string;
  /** The file's Content-Type as served. */
  readonly content_type: null | string;
  /** The file's size. */
  readonly bytes: number;
}

export interface ThrottleSetting {
  /** The host (with its port when not the default) the setting steers. */
  readonly host: string;
  /** Delay between the job's request starts on the host the adaptive throttle chose. */
  readonly delay_ms: number;
  /** The job's requests in flight on the host it allows. */
  readonly concurrency: number;
}

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
  /** sha-256 (hex) of the body as fetched, the key of its object in the content store; null when the job keeps no content. */
  readonly content_hash: null | string;
  /** The formats of this page kept in the content store, as the job asked (CrawlSpec.formats). */
  readonly formats: readonly StoredFormat[];
  /** The response's ETag validator (on a 304: the one that holds now); the HTTP cache sends it back as If-None-Match. */
  readonly etag: null | string;
  /** The response's Last-Modified validator (on a 304: the one that holds now); sent back as If-Modified-Since. */
  readonly last_modified: null | string;
  /** Set when the body parsed is the stored one (content_hash) rather than one received now: links and items are those of its parse. Null: fetched in full. */
  readonly from_cache: null | CacheReuse;
  /** Normalised page URLs the site's sitemaps list, kept by the crawl rules (a start URL that is a site's root, CrawlSpec.sitemap include or only); requested like links, at depth 1. */
  readonly sitemap_urls: readonly string[];
  /** Sitemap URLs kept by the crawl rules but left out of `sitemap_urls`: past the sitemap limits (TRAWL_SITEMAP_MAX_URLS) or the event's size limit. */
  readonly sitemap_urls_dropped: number;
  /** Why the page's body and formats were not kept although the job asked for them (formats) or would have cached it: STORAGE_QUOTA_EXCEEDED when the job's user has used up their storage quota. The page is fetched and parsed all the same. Null: nothing refused. */
  readonly content_refused: null | string;
  /** Set when the page is a duplicate (CrawlSpec.honour_canonical): its rel=canonical names another URL of the same host that the job may request, normalised. Its items were not extracted: they are the canonical page's, which the frontier requests unless already seen. Null: the page is its own canonical (or names none, or one the job could not request). */
  readonly canonical_url: null | string;
  /** What the worker tells the job's log besides the page, one line each, at most 5 of 200 characters: a proxy of the job benched since the job's previous page on this worker (`proxy <host:port> benched for <n> s after <n> connect errors in a row`). Never a credential. */
  readonly notes: readonly string[];
  /** The linked files of this page kept in the content store (CrawlSpec.downloads), at most TRAWL_DOWNLOADS_MAX_PER_PAGE. */
  readonly downloads: readonly StoredDownload[];
  /** What the adaptive throttle (CrawlSpec.adaptive_throttle) chose for the page's host, said when it moved by a meaningful margin since the worker last said it for the job (its first value, a change of concurrency, or of the delay by 25% and 20 ms), at most 100 times per job and worker. Null: nothing new (or no adaptive throttle). */
  readonly throttle: null | ThrottleSetting;
  /** 64-bit similarity hash (Charikar's simhash, 16 hex digits) of the page's main text: pages whose hashes differ in a few bits are near-duplicates. Null: not HTML, or no text. */
  readonly simhash: null | string;
  /** Set when the page is a near-duplicate (its simhash within TRAWL_NEAR_DUPLICATE_DISTANCE bits) of this earlier page of the job on the same host, as the worker that fetched both saw them: a print view, a session-id mirror. Its links were followed; its items, when they were the original's, were not extracted again (item_count 0). Null: a page of its own. */
  readonly near_duplicate_of: null | string;
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

/** A page of a schedule's run whose content differs from the same page (same normalised URL) in the schedule's previous finished run: their content hashes differ. Decided once per fetch by apps/services/webhooks against projector-pg's read models, on trawl.pages after the page's PageFetched. */
export interface PageChanged {
  readonly event_id: string;
  /** The PageFetched's time, so that a decision made again is the same event, byte for byte. */
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly fetch_id: string;
  /** The normalised requested URL, the page's identity across runs. */
  readonly url: string;
  readonly schedule_id: string;
  /** sha-256 of the body in this run. */
  readonly content_hash: string;
  /** The schedule's previous finished run, compared against. */
  readonly previous_job_id: string;
  readonly previous_fetch_id: string;
  readonly previous_content_hash: string;
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
  /** Why the item fails its website's item schema or a field transform (at most 10, each cut to 300 characters); empty for a valid item. An invalid item is kept, never dropped. */
  readonly errors: readonly string[];
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

/** A user paused a job: the frontier issues no new fetches for it (those already requested still complete) until JobResumed. */
export interface JobPaused {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly user_id: null | string;
  readonly reason: null | string;
}

/** A user resumed a paused job: the frontier requests what it held back, and the fetch deadline counts from here. */
export interface JobResumed {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one. */
  readonly causation_id: null | string;
  readonly job_id: string;
  readonly user_id: null | string;
}

/** The state of one session of a job's pool (CrawlSpec.sessions) after a change: a login, cookies a response set, a retirement and its replacement. On the compacted topic trawl.sessions, keyed by `<job_id>:<session>`: the latest record per key is the session, read by every worker. The cookie jar is sealed (SecretBox, TRAWL_SECRETS_KEY): no cookie value is ever in clear here. */
export interface SessionUpdated {
  readonly event_id: string;
  readonly occurred_at: Date;
  /** event_id of the event or request that caused this one (the FetchRequested whose fetch changed the session). */
  readonly causation_id: null | string;
  readonly job_id: string;
  /** The session's index in the job's pool, 0 to sessions - 1. */
  readonly session: number;
  /** How many times this slot's session was retired and replaced (a block); a new generation starts from the spec's cookies, logged out. */
  readonly generation: number;
  /** Grows by one with every change of the slot; a reader keeps the highest. */
  readonly version: number;
  /** The cookie jar (tough-cookie's serialisation), sealed: `tsec1.…`, bound to `session:<job_id>:<session>`. */
  readonly jar: string;
  /** none (no login in the spec, or not yet), done, failed. */
  readonly login: string;
  /** Logins this slot has performed, all generations together. */
  readonly logins: number;
  /** What changed: login, cookies, retired (with the error code that retired it). */
  readonly reason: string;
}

/** Every event type by name. */
export interface EventMap {
  TargetDue: TargetDue;
  CrawlRequested: CrawlRequested;
  JobDispatched: JobDispatched;
  FetchRequested: FetchRequested;
  PageFetched: PageFetched;
  PageFailed: PageFailed;
  PageChanged: PageChanged;
  ItemExtracted: ItemExtracted;
  JobCompleted: JobCompleted;
  JobFailed: JobFailed;
  JobCancelled: JobCancelled;
  JobPaused: JobPaused;
  JobResumed: JobResumed;
  SessionUpdated: SessionUpdated;
}
