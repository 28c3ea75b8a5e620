import { USER_ID_PATTERN, nullableDate, nullableInteger, nullableString } from './common.ts';

export const SCHEDULE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$';

export const scheduleViewSchema = {
  $id: 'Schedule',
  type: 'object',
  properties: {
    schedule_id: { type: 'string' },
    status: { type: 'string', enum: ['active', 'paused', 'cancelled', 'done'] },
    target_id: nullableString,
    request: {
      type: ['object', 'null'],
      properties: {
        spider: nullableString,
        start_urls: { type: 'array', items: { type: 'string' } },
        depth: { type: 'integer' },
        max_pages: nullableInteger,
        params: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    cron: nullableString,
    interval_ms: nullableInteger,
    run_at: nullableDate,
    last_scheduled: nullableDate,
    last_job_id: nullableString,
    next_run: nullableDate,
    next_runs: { type: 'array', items: { type: 'string', format: 'date-time' }, description: 'the next (up to) 5 slots' },
    created_at: { type: 'string', format: 'date-time' },
    paused_reason: {
      type: ['object', 'null'],
      description: 'why the dispatcher paused it: `WEBSITE_GONE`, `WEBSITE_NOT_OWNED`, `TARGET_NOT_OWNED` or `INTERVAL_TOO_SHORT` (null when it runs, or its owner paused it)',
      properties: { code: { type: 'string' }, message: { type: 'string' }, at: nullableDate },
    },
    skipped: {
      type: ['object', 'null'],
      description: 'the last slot the dispatcher skipped instead of starting a job, and why (`QUOTA_EXCEEDED: …`)',
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
    interval: { type: 'string', minLength: 1, maxLength: 200, description: 'cron (5 or 6 fields, UTC) or a duration (`30s`, `1h`)' },
  },
} as const;

const itemField = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'selector'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    selector: { type: 'string', maxLength: 500 },
    attribute: { type: ['string', 'null'], maxLength: 100, default: null },
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
    pagination_type: { type: 'string', enum: ['none', 'next_link', 'page_param'], default: 'none' },
    next_link_selector: { type: ['string', 'null'], maxLength: 500, default: null },
    page_param: { type: ['string', 'null'], maxLength: 100, default: null },
    item_root: { type: ['string', 'null'], maxLength: 500, default: null },
    item_fields: { type: 'array', maxItems: 50, items: itemField, default: [] },
    include_patterns: patterns,
    exclude_patterns: patterns,
    same_host: { type: 'boolean', default: true },
    allowed_hosts: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 253 }, default: [] },
    max_depth: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
    max_pages: { type: 'integer', minimum: 1, maximum: 100_000, default: 1000 },
    host_concurrency: { type: 'integer', minimum: 1, maximum: 64, default: 8 },
    host_delay_ms: { type: 'integer', minimum: 0, maximum: 60_000, default: 0 },
  },
} as const;

export const websiteViewSchema = {
  $id: 'Website',
  type: 'object',
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
  properties: { ...targetBody.properties, id: { type: 'string' }, search_url: { type: 'string' } },
} as const;
