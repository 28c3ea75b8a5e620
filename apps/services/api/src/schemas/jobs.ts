import { JOB_STATUSES, type JobStatus } from '../data/jobs.ts';

/** The statuses a list may filter by: the job statuses, and `error` (the seed's name for `failed`). */
export const STATUS_FILTERS = [...JOB_STATUSES, 'error'] as const;

/** A `status` filter as job statuses (`error` read as `failed`), without duplicates. */
export function statusFilter(raw: string): JobStatus[] {
  return [...new Set(raw.split(',').map((s) => (s === 'error' ? 'failed' : s) as JobStatus))];
}
import { cursorProperty, limitProperty, nullableDate, nullableInteger, nullableString } from './common.ts';

export const jobViewSchema = {
  $id: 'Job',
  type: 'object',
  required: ['job_id', 'status', 'schedule_id', 'target_id', 'website_id', 'spider', 'start_urls', 'search_url', 'depth', 'max_pages', 'params', 'started_at', 'counters', 'timings', 'error', 'retry_of', 'reextract_of', 'log_seq'],
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', enum: JOB_STATUSES },
    schedule_id: nullableString,
    target_id: nullableString,
    website_id: nullableString,
    spider: { ...nullableString, description: 'the website whose selectors and politeness apply' },
    start_urls: { type: 'array', items: { type: 'string' }, description: 'as requested: `{{name}}` placeholders are filled from `params` when the job starts' },
    search_url: nullableString,
    depth: { ...nullableInteger, description: 'link hops from a start URL' },
    max_pages: { ...nullableInteger, description: "the job's page budget" },
    params: { type: 'object', additionalProperties: { type: 'string' }, description: 'template values (`{{name}}` in start URLs and selectors)' },
    started_at: { ...nullableDate, description: 'when the job was handed to the crawl (its dispatch)' },
    counters: {
      type: 'object',
      required: ['pages_fetched', 'pages_failed', 'items_extracted', 'items_invalid', 'bytes', 'urls_seen'],
      properties: {
        pages_fetched: { type: 'integer' },
        pages_failed: { type: 'integer' },
        items_extracted: { type: 'integer' },
        items_invalid: { type: 'integer', description: "items kept with errors: a field transform or the website's `item_schema` refused them (`GET /jobs/:id/items?valid=false`); counted in items_extracted too" },
        bytes: { type: 'integer' },
        urls_seen: { type: 'integer' },
        pages_blocked: { type: 'integer', description: 'pages that ended blocked (a challenge, a captcha, a block pattern, on every attempt: error code TRAWL_BLOCKED; a login wall without a login: TRAWL_LOGIN_REQUIRED); only in `GET /jobs/:id/status`' },
        duplicates: { type: 'integer', description: 'pages fetched as duplicates by rel=canonical (honour_canonical): their items are their canonical page\'s, not extracted again; only in `GET /jobs/:id/status`' },
        near_duplicates: { type: 'integer', description: 'pages whose main text is within `TRAWL_NEAR_DUPLICATE_DISTANCE` bits (simhash) of an earlier page of the job on the same host (print views, session-id mirrors): their links were followed, their items not extracted again when they were the earlier page\'s; listed with `GET /jobs/:id/pages?duplicate=true`; only in `GET /jobs/:id/status`' },
        sessions_replaced: { type: 'integer', description: 'sessions of the job\'s pool (`sessions`) retired after a block and replaced by a fresh one, as its log says them; only in `GET /jobs/:id/status`' },
      },
    },
    timings: {
      type: 'object',
      required: ['requested_at', 'dispatched_at', 'first_page_at', 'finished_at', 'duration_ms'],
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
      required: ['code', 'message'],
      properties: { code: nullableString, message: nullableString },
    },
    retry_of: { ...nullableString, description: 'the job whose failed pages this one fetches again (`POST /jobs/:id/retry-failed`)' },
    reextract_of: { ...nullableString, description: 'the job whose stored pages this one parses again, fetching nothing (`POST /jobs/:id/reextract`)' },
    log_seq: { type: 'integer', description: 'the last log line so far (SSE `id`)' },
    throttle: {
      type: 'array',
      description: "what the adaptive throttle (`adaptive_throttle`) last chose per host for the job, as the workers told its log when it moved (its first value, a change of concurrency, or of the delay by 25% and 20 ms); empty without adaptive throttling; only in `GET /jobs/:id/status`",
      items: {
        type: 'object',
        required: ['host', 'delay_ms', 'concurrency', 'at'],
        properties: {
          host: { type: 'string' },
          delay_ms: { type: 'integer', description: "delay between the job's request starts on the host" },
          concurrency: { type: 'integer', description: "the job's requests in flight on the host it allows" },
          at: { type: 'string', format: 'date-time', description: 'when a worker chose it (its page event)' },
        },
      },
    },
  },
} as const;

export const jobListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', pattern: `^(${STATUS_FILTERS.join('|')})(,(${STATUS_FILTERS.join('|')}))*$`, description: 'comma list; `error` is an alias of `failed`' },
    schedule_id: { type: 'string', maxLength: 200 },
    since: { type: 'string', format: 'date-time' },
    until: { type: 'string', format: 'date-time' },
    limit: limitProperty,
    cursor: cursorProperty,
  },
} as const;

export const pageSchema = {
  $id: 'Page',
  type: 'object',
  required: ['fetch_id', 'url', 'final_url', 'status', 'content_type', 'bytes', 'fetch_ms', 'depth', 'render_mode', 'links_count', 'item_count', 'ok', 'error_code', 'error_message', 'attempts', 'fetched_at', 'content_hash', 'formats'],
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
    content_hash: { ...nullableString, description: 'sha-256 of the body as fetched (or reused), when it is stored: for `formats`, and for the HTTP cache' },
    from_cache: {
      type: ['string', 'null'],
      enum: ['not_modified', 'max_age', null],
      description: 'the page was parsed from its stored body (`content_hash`), not one fetched now: `not_modified` (a conditional request answered 304), `max_age` (reused without a request); null: fetched in full',
    },
    formats: {
      type: 'array',
      description: 'the formats stored for this page, each with its content hash and size',
      items: { type: 'object', required: ['format', 'hash', 'bytes'], properties: { format: { type: 'string' }, hash: { type: 'string' }, bytes: { type: 'integer' } } },
    },
    downloads: {
      type: 'array',
      description: 'the linked files kept for this page (the crawl\'s `downloads`), each stored once by its sha-256: read one with `GET /jobs/{id}/pages/{fetch_id}/downloads/{sha256}`',
      items: {
        type: 'object',
        required: ['url', 'sha256', 'content_type', 'bytes'],
        properties: { url: { type: 'string' }, sha256: { type: 'string' }, content_type: nullableString, bytes: { type: 'integer' } },
      },
    },
  },
} as const;

export const pageListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ok: { type: 'boolean', description: 'only fetched (true) or only failed (false) pages' },
    duplicate: { type: 'boolean', description: 'only pages marked duplicates (true: near-duplicates by main-text simhash, and rel=canonical duplicates) or only pages of their own (false)' },
    limit: limitProperty,
    cursor: cursorProperty,
    format: { type: 'string', enum: ['json', 'ndjson'], default: 'json', description: '`ndjson` streams every page of the job, one JSON object a line, without paging' },
    include: { type: 'string', enum: ['html', 'text', 'markdown', 'metadata'], description: 'with `format=ndjson`: add each page\'s stored content in this format as a field of that name (null when not stored; `metadata` as its JSON object); text formats only (a screenshot or PDF is read with the content endpoint)' },
  },
} as const;

export const pageContentQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['format'],
  properties: {
    format: { type: 'string', enum: ['html', 'text', 'markdown', 'screenshot', 'pdf', 'metadata'], description: '`screenshot` (image/png) and `pdf` (application/pdf) exist for pages a browser rendered with those formats asked' },
    inline: { type: 'boolean', default: false, description: 'answer with `Content-Disposition: inline` (a browser shows it, still sandboxed) rather than `attachment`' },
  },
} as const;

export const itemSchema = {
  $id: 'Item',
  type: 'object',
  required: ['item_key', 'fetch_id', 'url', 'fields', 'extracted_at'],
  properties: {
    item_key: { type: 'string' },
    fetch_id: { type: 'string' },
    url: { type: 'string' },
    fields: { type: 'object', additionalProperties: { type: 'string' } },
    extracted_at: { type: 'string', format: 'date-time' },
    errors: {
      type: 'array',
      items: { type: 'string' },
      description: "why the item fails a field's transform or the website's `item_schema` (at most 10); empty when valid. An invalid item is kept, never dropped",
    },
  },
} as const;

export const itemListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: {
      type: 'string',
      enum: ['json', 'ndjson', 'csv'],
      description: '`json` pages (default); `ndjson` and `csv` stream every item (also chosen by `Accept`). The CSV\'s columns: `item_key`, `url`, `extracted_at`, `errors` (the item\'s `errors` as a JSON array, blank when valid), then the union of the items\' field names',
    },
    limit: limitProperty,
    cursor: cursorProperty,
    valid: { type: 'boolean', description: '`false`: only the items kept with errors (`errors` not empty); `true`: only the valid ones; absent: all' },
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
