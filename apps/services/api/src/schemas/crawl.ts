import { USER_ID_PATTERN, errorResponses } from './common.ts';
import { reachOptionProperties, requestOptionProperties } from './request-options.ts';

export const timeZoneProperty = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: 'IANA time zone a cron `interval` is read in (`Europe/Berlin`): slots keep their local time across daylight-saving changes. Default UTC; schedules only',
} as const;

export const overlapProperty = {
  type: 'string',
  enum: ['skip', 'queue', 'allow'],
  description: "a slot due while the schedule's previous job is still pending, running or paused: `skip` it (recorded in `skipped`), `queue` it until that job ends, or `allow` both to run. Default skip; schedules only",
} as const;

export const dedupeProperty = {
  type: 'boolean',
  description: "a slot whose request equals a crawl of yours started within the dedupe TTL (an immediate `POST /crawl`, or a run of another schedule with `dedupe`) is not run: it is answered from that job, recorded in `skipped` (`DEDUPED: answered by job …`); a run that starts answers identical crawls until the TTL. The schedule's own earlier runs never answer its slots. Default false; schedules of start URLs only",
} as const;

export const crawlBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['start_urls', 'depth'],
  properties: {
    spider: { type: 'string', pattern: USER_ID_PATTERN, description: 'a website id whose selectors, pagination and politeness apply' },
    start_urls: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { type: 'string', format: 'http-url', maxLength: 2048 },
      description: 'absolute http(s) URLs',
    },
    depth: { type: 'integer', minimum: 0, maximum: 10, description: 'link hops from a start URL; 0 fetches the start URLs only' },
    max_pages: { type: 'integer', minimum: 1, maximum: 100_000 },
    schedule_at: { type: 'string', format: 'date-time', description: 'run once at this time (with `interval`: start repeating then)' },
    interval: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'repeat: a cron expression (5 fields, or 6 with seconds; read in `time_zone`) or a duration such as `30s`, `15m`, `2h`',
    },
    time_zone: timeZoneProperty,
    overlap: overlapProperty,
    dedupe: dedupeProperty,
    formats: {
      type: 'array',
      items: { type: 'string', enum: ['html', 'text', 'markdown', 'screenshot', 'pdf', 'metadata'] },
      uniqueItems: true,
      maxItems: 6,
      description: 'content to keep of each HTML page in the content store: `html` (the body as fetched), `text` (main content, boilerplate removed), `markdown`, `screenshot` (a PNG of the rendered page) and `pdf` (these two render the page in Chromium), `metadata` (its structured data as JSON: title, description, language, canonical, OpenGraph, Twitter card, JSON-LD, microdata); read back with `GET /jobs/{id}/pages/{fetch_id}/content`. Default none. A schedule keeps them for every run; its runs are then compared page by page (`GET /jobs/{id}/changes`).',
    },
    content_retention: {
      type: 'integer',
      minimum: 1,
      description: "seconds the job's stored content is kept after the job ends; then it is deleted (but objects another job still names). Default and maximum: the server's (`TRAWL_CONTENT_RETENTION_SECONDS`, 30 days; `TRAWL_CONTENT_RETENTION_MAX_SECONDS`, 90 days: more is `RETENTION_TOO_LONG`). A schedule's applies to each of its runs",
    },
    max_age: {
      type: 'integer',
      minimum: 0,
      maximum: 31_536_000,
      description: 'seconds: a page you fetched this recently (with any earlier crawl) is reused from the HTTP cache without a request — its stored body parsed again, its links and items emitted as `from_cache`. Pages older than that are revalidated with a conditional request (`If-None-Match`/`If-Modified-Since`), a `304` reusing the stored body. Default (or 0): always revalidate',
    },
    sitemap: {
      type: 'string',
      enum: ['include', 'only', 'skip'],
      description: "what a start URL that is a site's root (`https://example.com/`) does with the site's sitemaps — the `Sitemap:` lines of its robots.txt, else `/sitemap.xml`; indexes, nested indexes and gzip sitemaps are read, bounded by the server (`TRAWL_SITEMAP_*`). `include` (default): their URLs join the crawl at depth 1 (whatever `depth`), filtered by the crawl's rules (same host, patterns) and `max_pages`; `only`: the start URLs and the sitemaps' URLs, no link followed; `skip`: sitemaps are not read. A site without sitemaps costs one request for `/sitemap.xml`, which is no page of the job",
    },
    ignore_cache: { type: 'boolean', description: 'bypass both caches: start a new job even if an identical one ran within the dedupe TTL, and fetch every page in full (no reuse within `max_age`, no conditional request). Also `?ignore_cache=true`' },
    store_in_cache: {
      type: 'boolean',
      description:
        "keep each whole HTML page's body in the content store for the HTTP cache, so that a later crawl of yours revalidates it (a `304` reuses it) or reuses it within `max_age`. Storing costs each page an object write: default `false` for a crawl that runs once, `true` for a recurring schedule's runs. A page already in your cache has its entry kept up to date either way",
    },
    params: {
      type: 'object',
      maxProperties: 50,
      propertyNames: { maxLength: 100 },
      additionalProperties: { type: 'string', maxLength: 2000 },
    },
    ...requestOptionProperties,
    ...reachOptionProperties,
  },
} as const;

/** A crawl started (or found in the dedupe TTL): the 200 of `POST /crawl` and of a retry. */
export const crawlAcceptedSchema = {
  $id: 'CrawlAccepted',
  description: 'an immediate crawl: a new job, or (`cached: true`) an identical one from within the dedupe TTL',
  type: 'object',
  required: ['job_id', 'scheduled', 'cached', 'status_url', 'logs_url'],
  properties: {
    job_id: { type: 'string', format: 'uuid' },
    scheduled: { type: 'boolean', enum: [false] },
    cached: { type: 'boolean' },
    cached_at: { type: 'string', format: 'date-time' },
    max_pages: { type: 'integer', description: "a new job's page budget: what it asked for, or what is left of the day's `pages_per_day` quota when that is less" },
    status_url: { type: 'string', description: 'the job\'s status (`GET`), as a path on this API' },
    logs_url: { type: 'string', description: 'the job\'s log as server-sent events (`GET`), as a path on this API' },
    retry_of: { type: 'string', description: 'for `POST /jobs/:id/retry-failed`: the job whose failed pages this one fetches again' },
  },
} as const;

/** A scheduled crawl: the 202 of `POST /crawl`. */
export const crawlScheduledSchema = {
  $id: 'CrawlScheduled',
  description: 'a scheduled crawl',
  type: 'object',
  required: ['schedule_id', 'scheduled', 'next_run', 'job_id'],
  properties: {
    schedule_id: { type: 'string' },
    job_id: { type: 'string', format: 'uuid', description: "the next slot's job (derived from the schedule and the slot; a slot the dispatcher reaches late, after an outage, has its own)" },
    scheduled: { type: 'boolean', enum: [true] },
    next_run: { type: 'string', format: 'date-time' },
  },
} as const;

export const crawlResponses = {
  200: { description: crawlAcceptedSchema.description, $ref: 'CrawlAccepted#' },
  202: { description: crawlScheduledSchema.description, $ref: 'CrawlScheduled#' },
  ...errorResponses('MISSING_PARAM', 'RETENTION_TOO_LONG', 'HEADER_NOT_ALLOWED', 'INVALID_HEADER', 'REQUEST_OPTIONS_TOO_LARGE', 'INVALID_LOCALE', 'INVALID_COOKIE', 'COOKIE_DOMAIN_NOT_CRAWLED', 'INVALID_PROXY', 'PROXY_NOT_ALLOWED', 'ACTIONS_TOO_MANY', 'INVALID_ACTION', 'UNSUPPORTED_SELECTOR', 'INVALID_JSON', 'INVALID_CRON', 'INTERVAL_TOO_SHORT', 'SCHEDULE_IN_PAST', 'UNKNOWN_SPIDER', 'SHARED_SPIDER_HOSTS', 'QUOTA_EXCEEDED', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'),
} as const;

export const crawlQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ignore_cache: { type: 'boolean', description: 'as the body field; the body wins when both are given' },
  },
} as const;
