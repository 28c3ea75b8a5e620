import { JOB_STATUSES } from '../data/jobs.ts';
import { cursorProperty, limitProperty, nullableDate, nullableInteger, nullableString } from './common.ts';

export const jobViewSchema = {
  $id: 'Job',
  type: 'object',
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', enum: JOB_STATUSES },
    schedule_id: nullableString,
    target_id: nullableString,
    website_id: nullableString,
    start_urls: { type: 'array', items: { type: 'string' } },
    search_url: nullableString,
    counters: {
      type: 'object',
      properties: {
        pages_fetched: { type: 'integer' },
        pages_failed: { type: 'integer' },
        items_extracted: { type: 'integer' },
        bytes: { type: 'integer' },
        urls_seen: { type: 'integer' },
      },
    },
    timings: {
      type: 'object',
      properties: {
        requested_at: nullableDate,
        dispatched_at: nullableDate,
        first_page_at: nullableDate,
        finished_at: nullableDate,
        duration_ms: { ...nullableInteger, description: 'from request (or dispatch) to the end, or to now while running' },
      },
    },
    error: {
      type: ['object', 'null'],
      properties: { code: nullableString, message: nullableString },
    },
    log_seq: { type: 'integer', description: 'the last log line so far (SSE `id`)' },
  },
} as const;

export const jobListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', pattern: `^(${JOB_STATUSES.join('|')})(,(${JOB_STATUSES.join('|')}))*$`, description: 'comma list' },
    schedule_id: { type: 'string', maxLength: 200 },
    since: { type: 'string', format: 'date-time' },
    until: { type: 'string', format: 'date-time' },
    limit: limitProperty,
    cursor: cursorProperty,
  },
} as const;

export const pageSchema = {
  type: 'object',
  properties: {
    fetch_id: { type: 'string' },
    url: { type: 'string' },
    final_url: nullableString,
    status: nullableInteger,
    content_type: nullableString,
    bytes: nullableInteger,
    fetch_ms: nullableInteger,
    depth: nullableInteger,
    render_mode: nullableString,
    links_count: nullableInteger,
    item_count: nullableInteger,
    ok: { type: 'boolean' },
    error_code: nullableString,
    error_message: nullableString,
    attempts: nullableInteger,
    fetched_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const pageListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ok: { type: 'boolean', description: 'only fetched (true) or only failed (false) pages' },
    limit: limitProperty,
    cursor: cursorProperty,
  },
} as const;

export const itemSchema = {
  type: 'object',
  properties: {
    item_key: { type: 'string' },
    fetch_id: { type: 'string' },
    url: { type: 'string' },
    fields: { type: 'object', additionalProperties: { type: 'string' } },
    extracted_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const itemListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: {
      type: 'string',
      enum: ['json', 'ndjson', 'csv'],
      description: '`json` pages (default); `ndjson` and `csv` stream every item (also chosen by `Accept`)',
    },
    limit: limitProperty,
    cursor: cursorProperty,
  },
} as const;

export const logQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    last_event_id: { type: 'integer', minimum: 0, description: 'as the `Last-Event-ID` header, for clients that cannot set it' },
    access_token: { type: 'string', description: 'the API key, for EventSource clients that cannot set headers' },
  },
} as const;
