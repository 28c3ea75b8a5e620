import { USER_ID_PATTERN, nullableDate, nullableInteger, nullableString } from './common.ts';
import { crawlBodySchema, dedupeProperty, overlapProperty, timeZoneProperty } from './crawl.ts';
import { reachOptionProperties, requestOptionProperties, websiteReachOptionProperties, websiteRequestOptionProperties } from './request-options.ts';

export const SCHEDULE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$';

export const scheduleViewSchema = {
  $id: 'Schedule',
  type: 'object',
  required: ['schedule_id', 'status', 'target_id', 'request', 'cron', 'interval_ms', 'run_at', 'time_zone', 'overlap', 'dedupe', 'last_scheduled', 'last_job_id', 'next_run', 'next_runs', 'created_at', 'paused_reason', 'skipped'],
  properties: {
    schedule_id: { type: 'string' },
    status: { type: 'string', enum: ['active', 'paused', 'cancelled', 'done'] },
    target_id: nullableString,
    request: {
      type: ['object', 'null'],
      required: ['start_urls', 'depth'],
      description: 'what a crawl schedule fetches (null: a target schedule, which crawls its target)',
      properties: {
        spider: nullableString,
        start_urls: { type: 'array', items: { type: 'string' } },
        depth: { type: 'integer' },
        max_pages: nullableInteger,
        params: { type: 'object', additionalProperties: { type: 'string' } },
        formats: { type: 'array', items: { type: 'string' }, description: 'content each run keeps (`POST /crawl`)' },
        content_retention: { ...nullableInteger, description: "seconds each run's content is kept after it ends; null: the server's default" },
        max_age: { ...nullableInteger, description: 'seconds within which a run reuses a page fetched before without a request' },
        ignore_cache: { type: 'boolean', description: 'runs bypass the HTTP cache' },
        store_in_cache: { type: 'boolean', description: 'runs keep page bodies for the HTTP cache; absent: true for a recurring schedule' },
        sitemap: { type: 'string', enum: ['include', 'only', 'skip'], description: "what runs do with the sitemaps of start URLs that are a site's root (`POST /crawl`); absent: `include`" },
        ...requestOptionProperties,
        ...reachOptionProperties,
      },
    },
    cron: nullableString,
    interval_ms: nullableInteger,
    run_at: nullableDate,
    time_zone: { type: 'string', description: 'IANA time zone the cron expression is read in' },
    overlap: { type: 'string', enum: ['skip', 'queue', 'allow'], description: "what a slot does while the schedule's previous job is still going" },
    dedupe: { type: 'boolean', description: 'whether a slot is answered from an identical crawl started within the dedupe TTL instead of run' },
    last_scheduled: nullableDate,
    last_job_id: nullableString,
    next_run: nullableDate,
    next_runs: { type: 'array', items: { type: 'string', format: 'date-time' }, description: 'the next (up to) 5 slots' },
    created_at: { type: 'string', format: 'date-time' },
    paused_reason: {
      type: ['object', 'null'],
      description: 'why the dispatcher paused it: `WEBSITE_GONE`, `WEBSITE_NOT_OWNED`, `TARGET_NOT_OWNED` or `INTERVAL_TOO_SHORT` (null when it runs, or its owner paused it)',
      required: ['code', 'message', 'at'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, at: nullableDate },
    },
    skipped: {
      type: ['object', 'null'],
      description: 'the last slot the dispatcher skipped instead of starting a job, and why (`QUOTA_EXCEEDED: …`, `OVERLAP: …`, `DEDUPED: answered by job …`)',
      required: ['at', 'reason'],
      properties: { at: nullableDate, reason: { type: 'string' } },
    },
  },
} as const;

export const scheduleCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['target_id'],
  properties: {
    target_id: { type: 'string', pattern: USER_ID_PATTERN },
    schedule_at: { type: 'string', format: 'date-time' },
    interval: { type: 'string', minLength: 1, maxLength: 200, description: 'cron (5 or 6 fields, read in `time_zone`) or a duration (`30s`, `1h`)' },
    time_zone: timeZoneProperty,
    overlap: overlapProperty,
  },
} as const;

/** `PATCH /schedules/{id}`: what is given changes, the rest stays; `next_run` moves to the new cadence. */
export const schedulePatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    schedule_at: { type: ['string', 'null'], format: 'date-time', description: 'run once then (with `interval`: start repeating then); null removes it' },
    interval: { type: ['string', 'null'], minLength: 1, maxLength: 200, description: 'cron (5 or 6 fields, read in `time_zone`) or a duration (`30s`, `1h`); null makes it a one-shot at `schedule_at`' },
    time_zone: timeZoneProperty,
    overlap: overlapProperty,
    dedupe: dedupeProperty,
    request: {
      type: 'object',
      additionalProperties: false,
      required: ['start_urls', 'depth'],
      description: 'what a scheduled crawl fetches (as in `POST /crawl`); schedules of a target crawl the target',
      properties: {
        spider: crawlBodySchema.properties.spider,
        start_urls: crawlBodySchema.properties.start_urls,
        depth: crawlBodySchema.properties.depth,
        max_pages: crawlBodySchema.properties.max_pages,
        params: crawlBodySchema.properties.params,
        formats: crawlBodySchema.properties.formats,
        content_retention: crawlBodySchema.properties.content_retention,
        max_age: crawlBodySchema.properties.max_age,
        ignore_cache: { type: 'boolean', description: "every run bypasses the HTTP cache (fetches every page in full)" },
        store_in_cache: crawlBodySchema.properties.store_in_cache,
        sitemap: crawlBodySchema.properties.sitemap,
        ...requestOptionProperties,
        ...reachOptionProperties,
      },
    },
  },
} as const;

const fieldTransform = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['trim', 'number', 'date', 'absolute_url', 'regex'] },
    pattern: { type: ['string', 'null'], maxLength: 500, description: 'regex: an RE2 pattern; the value becomes its first capture group (or the whole match without one)' },
  },
} as const;

const itemField = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  description: 'read by CSS (`selector`) or XPath (`xpath`): give one of them',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    selector: { type: 'string', maxLength: 500, description: 'CSS selector inside the item root; empty for the root itself' },
    xpath: { type: ['string', 'null'], maxLength: 500, description: "XPath 1.0 expression from the item root (`.//h2`, `a/@href`, `normalize-space(.//p[1])`): its first node's text or attribute, or its string value" },
    attribute: { type: ['string', 'null'], maxLength: 100, default: null },
    transforms: {
      type: 'array',
      maxItems: 8,
      items: fieldTransform,
      description: '`trim`, `number` (a JSON number for the item schema), `date` (ISO 8601, UTC), `absolute_url`, `regex` (`pattern`: an RE2 capture), applied in order before the item schema (`INVALID_TRANSFORM`)',
    },
  },
} as const;

const patterns = {
  type: 'array',
  maxItems: 50,
  items: { type: 'string', minLength: 1, maxLength: 500 },
  default: [],
  description: 'regular expressions tested against each normalised link, run in a linear-time engine (RE2 syntax): no backreferences, no lookahead or lookbehind (`UNSUPPORTED_PATTERN`)',
} as const;

/** A website as written by a user; defaults are those of a plain crawl (crawlSpec). */
export const websiteBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'base_url'],
  properties: {
    id: { type: 'string', pattern: USER_ID_PATTERN, description: 'chosen by you (used as `spider`); generated when absent' },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    base_url: { type: 'string', format: 'http-url' },
    requires_browser: { type: 'boolean', default: false },
    pagination_type: { type: 'string', enum: ['none', 'next_link', 'page_param', 'infinite_scroll', 'load_more'], default: 'none', description: '`infinite_scroll` and `load_more` run in the browser' },
    next_link_selector: { type: ['string', 'null'], maxLength: 500, default: null },
    load_more_selector: { type: ['string', 'null'], maxLength: 500, default: null, description: 'load_more: the button that loads more of the list' },
    page_param: { type: ['string', 'null'], maxLength: 100, default: null },
    item_root: { type: ['string', 'null'], maxLength: 500, default: null, description: 'CSS selector of one item' },
    item_root_xpath: { type: ['string', 'null'], maxLength: 500, default: null, description: 'XPath 1.0 expression of the items (`//article[@class="job"]`), instead of `item_root`' },
    item_fields: { type: 'array', maxItems: 50, items: itemField, default: [] },
    item_schema: {
      type: ['object', 'null'],
      additionalProperties: true,
      default: null,
      description: "JSON Schema each item is validated against after its fields' transforms (Ajv, at most 16 KiB; `pattern` in RE2 syntax; `INVALID_ITEM_SCHEMA`): an item that fails it is kept with its `errors` and counted (`items_invalid`), never dropped",
    },
    include_patterns: patterns,
    exclude_patterns: patterns,
    same_host: { type: 'boolean', default: true },
    allowed_hosts: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 253 }, default: [] },
    max_depth: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
    max_pages: { type: 'integer', minimum: 1, maximum: 100_000, default: 1000 },
    host_concurrency: { type: 'integer', minimum: 1, maximum: 64, default: 8 },
    host_delay_ms: { type: 'integer', minimum: 0, maximum: 60_000, default: 0 },
    ...websiteRequestOptionProperties,
    ...websiteReachOptionProperties,
  },
} as const;

export const websiteViewSchema = {
  $id: 'Website',
  type: 'object',
  // Reach options appear when set (credentials in them as `***` or `{secret}`).
  required: [...Object.keys(websiteBody.properties).filter((k) => !(k in websiteReachOptionProperties)), 'shared'],
  properties: {
    ...websiteBody.properties,
    id: { type: 'string' },
    shared: { type: 'boolean', description: 'provided by the platform, read-only' },
  },
} as const;

export const targetBody = {
  type: 'object',
  additionalProperties: false,
  required: ['website_id', 'url_template'],
  properties: {
    id: { type: 'string', pattern: USER_ID_PATTERN, description: 'generated when absent' },
    website_id: { type: 'string', pattern: USER_ID_PATTERN },
    name: { type: ['string', 'null'], maxLength: 200, default: null },
    url_template: { type: 'string', minLength: 1, maxLength: 2048, description: 'a URL, or a template with `{keywords}` and `{location}`' },
    keywords: { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 200 }, default: [] },
    location: { type: ['string', 'null'], maxLength: 200, default: null },
    active: { type: 'boolean', default: true },
  },
} as const;

export const targetViewSchema = {
  $id: 'Target',
  type: 'object',
  required: [...Object.keys(targetBody.properties), 'search_url'],
  properties: { ...targetBody.properties, id: { type: 'string' }, search_url: { type: 'string' } },
} as const;
