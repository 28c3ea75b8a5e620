/**
 * The one catalogue of the API's errors. Every error a client can see has a stable `code`, an HTTP
 * status and a description; the README's error table is checked against this list by a test, so
 * no code goes undocumented. Every error body is `{ error: { code, message, field? } }`.
 *
 * Handlers throw `ApiError`s; the error handler (plugins/error-handler.ts) is the only place that
 * turns anything (ours, Fastify's, a validation failure) into a response.
 */
import { TrawlError } from '@trawl/schemas';

export interface ErrorSpec {
  readonly status: number;
  readonly description: string;
}

export const ERRORS = {
  VALIDATION_FAILED: { status: 400, description: 'The request does not match the schema; `field` names the offending field and `message` says why.' },
  INVALID_JSON: { status: 400, description: 'The body is not valid JSON (or is empty while a JSON content type was sent).' },
  INVALID_CRON: { status: 400, description: '`interval` is neither a cron expression (5 fields, or 6 with seconds; read in the schedule\'s `time_zone`) nor a duration such as `30s`, `5m`, `1h`.' },
  INVALID_TIME_ZONE: { status: 400, description: '`time_zone` is not an IANA time zone name (such as `Europe/Berlin`, `America/New_York` or `UTC`).' },
  SCHEDULE_IN_PAST: { status: 400, description: '`schedule_at` lies more than a minute in the past.' },
  INTERVAL_TOO_SHORT: { status: 400, description: 'The schedule would run more often than the minimum interval (`min_interval_seconds`, 60 s by default); `limit` names it and its value.' },
  UNKNOWN_SPIDER: { status: 400, description: '`spider` names no website visible to the caller.' },
  UNKNOWN_WEBSITE: { status: 400, description: 'A target refers to a website that is not visible to the caller.' },
  UNSUPPORTED_PATTERN: { status: 400, description: 'An include/exclude pattern uses a construct the linear-time pattern engine (RE2 syntax) does not run — a backreference, a lookahead or lookbehind, a letter escape RE2 reads differently — or its list compiles too large; `field` names the pattern and `message` the construct.' },
  UNSUPPORTED_SELECTOR: { status: 400, description: 'A CSS selector or XPath expression of the website uses a construct whose cost grows with the page — in CSS the sibling combinator `~`, a sibling combinator, `:has` or `:contains` inside `:has`, pseudo-classes nested more than 2 deep; in XPath the following, preceding and sibling axes, more than 2 descendant steps (`//`), a path from the top of the page inside a predicate or in a field — or is too long (more than 16 selectors in a list, 16 compounds or steps); `field` names the selector and `message` the construct.' },
  INVALID_TRANSFORM: { status: 400, description: "A field's `transforms` cannot run: a `regex` without a pattern, or with one the linear-time engine (RE2 syntax) refuses, a pattern on another transform, more than 8 transforms; `field` names the field's transforms." },
  INVALID_ITEM_SCHEMA: { status: 400, description: "The website's `item_schema` is not a JSON Schema Ajv compiles within its bounds: over 16 KiB, nested more than 16 deep, an unknown keyword or format, a remote `$ref`, a `pattern` RE2 refuses; `message` says which." },
  WEBHOOK_URL_REFUSED: { status: 400, description: 'The webhook `url` leads to an address crawls may not reach (loopback, private, link-local, metadata… unless `TRAWL_FETCH_ALLOW` opens it), does not resolve, or carries credentials; `message` says which.' },
  MISSING_PARAM: { status: 400, description: 'A `{{name}}` placeholder in a start URL or in the spider\'s selectors has no value in `params`; `field` names where it is.' },
  RETENTION_TOO_LONG: { status: 400, description: '`content_retention` is longer than this server keeps content (`TRAWL_CONTENT_RETENTION_MAX_SECONDS`, 90 days by default); `limit` names the maximum.' },
  HEADER_NOT_ALLOWED: { status: 400, description: 'A request option header may not be set: `Host`, a hop-by-hop header (`Connection`, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`), or one Trawl sets itself (`User-Agent`, `Accept-Language`, `Cookie` — use `user_agent`, `locale`, `cookies` — `Accept-Encoding`, `Content-Length`, `Expect`, conditional and range headers); `field` names it.' },
  INVALID_HEADER: { status: 400, description: 'A request option header name is not an RFC 7230 token, is given twice, or a header value or `user_agent` holds a control character (CR, LF, NUL…); `field` names it.' },
  REQUEST_OPTIONS_TOO_LARGE: { status: 400, description: 'Request options over their bounds: more than 32 headers or 8 KiB of headers with the user agent, a user agent over 512 characters, more than 16 cookie domains, 64 cookies, 4 KiB a cookie or 16 KiB in all.' },
  INVALID_LOCALE: { status: 400, description: '`locale` is not a BCP 47 language tag (such as `fr-CH` or `en`).' },
  INVALID_COOKIE: { status: 400, description: 'A cookie does not parse as a Set-Cookie string (RFC 6265), holds a control character, or cannot be set for its domain (a `Domain` attribute that does not cover it or is a public suffix, a `__Host-`/`__Secure-` prefix without its rules), or a `cookies` key is not a host name; `field` names it, the message never holds its value.' },
  COOKIE_DOMAIN_NOT_CRAWLED: { status: 400, description: 'A `cookies` domain is none of the crawl\'s hosts (its start URLs, the website\'s base URL, `allowed_hosts`) nor a parent of one, or is a public suffix.' },
  UNKNOWN_SECRET: { status: 400, description: 'A credential names a secret (`{"secret": "<name>"}`) the caller has not created (`POST /secrets`; another user\'s secrets are unknown to the caller); `field` names where. Nothing is stored.' },
  SECRET_TOO_LARGE: { status: 400, description: 'A secret\'s `value` is longer than `TRAWL_SECRETS_MAX_VALUE_BYTES` (8 KiB by default) in UTF-8; `limit` names the maximum.' },
  SHARED_SPIDER_HOSTS: { status: 400, description: 'A crawl on a shared website that carries credentials (headers, cookies, proxy or login credentials) names a start URL off the website\'s hosts (its base URL\'s host, `allowed_hosts`) or a wider `scope`: the operator\'s credentials go only to the website\'s own hosts; `field` names it.' },
  LOGIN_NEEDS_SESSIONS: { status: 400, description: 'A `login` was given without `sessions` ≥ 1: a login runs once per session and its cookies live in the session.' },
  INVALID_PROXY: { status: 400, description: 'A proxy cannot be used as given: not an `http://`, `https://` or `socks5://` URL of a host and a port, credentials in its URL (give `username` / `password`, a literal or `{"secret": "<name>"}`), a password without a username, the same proxy twice, or more than 50 proxies; `field` names it, the message never holds a credential.' },
  PROXY_NOT_ALLOWED: { status: 400, description: 'A proxy\'s address is one crawls may not reach: loopback, private, link-local or metadata, or `localhost` — unless `TRAWL_FETCH_ALLOW` opens it, which never opens the stack\'s own ports; `field` names it.' },
  INVALID_LOGIN: { status: 400, description: 'A `login` cannot run as given: a form login without `fields`, a browser login without `actions`, or no rule that tells success (`success_selector`, `success_url_pattern`, `failure_text`); `field` names it.' },
  ACTIONS_TOO_MANY: { status: 400, description: 'An `actions` list (a crawl\'s or a browser login\'s) is longer than the 50 actions a page runs; `field` names the list.' },
  INVALID_ACTION: { status: 400, description: 'A browser action cannot run as given: a `type` that is no action, without what its type needs (`selector` for `wait_for` and `click`, `text` for `type`, `key` for `press`, `ms` for `wait`), `text` on another type, an `ms` or `times` out of bounds, a `key` that is no key name, a selector that is no CSS selector; or `pagination_type: load_more` without `load_more_selector`. `field` names it; the message never holds a typed text.' },
  UNSUPPORTED_FORMAT: { status: 400, description: '`POST /scrape`: a `formats` entry is none of `markdown`, `html`, `text`, `links`, `screenshot`, `pdf`, `metadata`; `field` names it.' },
  URL_REFUSED: { status: 400, description: '`POST /scrape` or `POST /map`: the `url` leads to an address crawls may not reach (loopback, private, link-local, metadata, the stack\'s own ports… unless `TRAWL_FETCH_ALLOW` opens it), does not resolve, or carries credentials. The message never names the address.' },
  TIMEOUT_TOO_LONG: { status: 400, description: '`POST /scrape` or `POST /map`: `timeout_ms` is over the server\'s maximum (`TRAWL_SCRAPE_MAX_TIMEOUT_MS`, 120 s by default).' },
  BAD_REQUEST: { status: 400, description: 'The request is malformed in a way no more specific code covers.' },
  UNAUTHENTICATED: { status: 401, description: 'No valid API key: send `Authorization: Bearer <key>`.' },
  READ_ONLY_RESOURCE: { status: 403, description: 'The resource is shared by the platform and cannot be changed by a user.' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No such endpoint.' },
  JOB_NOT_FOUND: { status: 404, description: 'No job with this id belongs to the caller.' },
  SCHEDULE_NOT_FOUND: { status: 404, description: 'No schedule with this id belongs to the caller.' },
  WEBSITE_NOT_FOUND: { status: 404, description: 'No website with this id is visible to the caller.' },
  TARGET_NOT_FOUND: { status: 404, description: 'No target with this id belongs to the caller.' },
  WEBHOOK_NOT_FOUND: { status: 404, description: 'No webhook with this id belongs to the caller.' },
  SECRET_NOT_FOUND: { status: 404, description: 'The caller has no secret of this name.' },
  DELIVERY_NOT_FOUND: { status: 404, description: 'The webhook has no delivery with this id.' },
  PAGE_NOT_FOUND: { status: 404, description: 'The job has no page with this fetch id.' },
  CONTENT_NOT_FOUND: { status: 404, description: 'The page has no stored content in this format: the job did not ask for it (`formats`), the page was not HTML, or its content was deleted.' },
  JOB_ALREADY_FINISHED: { status: 409, description: 'The job has already finished, failed or been cancelled.' },
  JOB_NOT_PAUSABLE: { status: 409, description: 'Pause: the job is already paused. Resume: the job is not paused.' },
  JOB_NOT_FINISHED: { status: 409, description: 'Retrying failed pages or re-extracting waits for the job to end (finished, failed or cancelled) and, for a re-extraction, for all its pages to be recorded.' },
  JOB_NOT_SCHEDULED: { status: 409, description: 'Change tracking compares the runs of a schedule: this job was not started by one, and neither `against` names a job to compare it with nor is it a re-extraction (`GET /jobs/:id/changes`).' },
  NOTHING_TO_REEXTRACT: { status: 409, description: 'The job has no fetched page whose body was stored (it asked for no `formats` and did not `store_in_cache`, and the HTTP cache holds none of its URLs): a re-extraction reads stored bodies only (`POST /jobs/:id/reextract`).' },
  NO_FAILED_PAGES: { status: 409, description: 'The job has no failed pages to fetch again.' },
  SCHEDULE_NOT_ACTIVE: { status: 409, description: 'The schedule is cancelled or done, or already in the requested state.' },
  ID_TAKEN: { status: 409, description: 'Another user already owns a website or target with this id.' },
  WEBSITE_IN_USE: { status: 409, description: 'The website still has targets; delete them first.' },
  BODY_TOO_LARGE: { status: 413, description: 'The body exceeds the limit (`TRAWL_API_BODY_LIMIT`, 64 KiB by default).' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'Bodies must be `application/json`.' },
  UPGRADE_REQUIRED: { status: 426, description: '`/events` is a WebSocket endpoint: connect with `Upgrade: websocket`.' },
  RATE_LIMITED: { status: 429, description: 'Too many requests for this API key, or too many failed authentications from this address; retry after `retry-after` seconds.' },
  QUOTA_EXCEEDED: { status: 429, description: 'A quota of the caller is used up: `active_jobs`, `pages_per_day`, `schedules`, `webhooks`, `secrets` (`TRAWL_SECRETS_MAX_PER_USER`, 100 by default) or `webhook_tests_per_hour` (test and re-delivery calls, with `retry-after`); `limit` names it, its value and what is in use (`GET /quotas`).' },
  TOO_MANY_STREAMS: { status: 429, description: 'The caller already has `TRAWL_API_MAX_STREAMS_PER_USER` (20) SSE log streams and WebSocket feeds open on this API instance; close one first.' },
  INTERNAL: { status: 500, description: 'An unexpected error; it is logged with the request id.' },
  DEPENDENCY_UNAVAILABLE: { status: 503, description: 'Kafka or Postgres did not answer; nothing was changed, retry later.' },
  FEED_UNAVAILABLE: { status: 503, description: 'The live feed is not connected to Kafka (yet); retry later.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

/** The quota a QUOTA_EXCEEDED or INTERVAL_TOO_SHORT names: its name, value and what is in use. */
export interface LimitDetail {
  readonly name: string;
  readonly value: number;
  readonly used: number;
}

export interface ApiErrorOptions {
  /** The request field at fault, as a dotted path (`start_urls.0`). */
  readonly field?: string;
  readonly limit?: LimitDetail;
  readonly cause?: unknown;
}

/**
 * An error meant for the client. `retriable` says whether the same request may succeed later
 * (a rate limit, an outage), which clients such as the CLI use to decide whether to retry.
 */
export class ApiError extends TrawlError {
  readonly statusCode: number;
  readonly retriable: boolean;
  readonly field: string | undefined;
  readonly limit: LimitDetail | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string = ERRORS[code].description,
    options: ApiErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.statusCode = ERRORS[code].status;
    this.retriable = this.statusCode === 429 || this.statusCode >= 500;
    this.field = options.field;
    this.limit = options.limit;
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.field === undefined ? {} : { field: this.field }),
        ...(this.limit === undefined ? {} : { limit: this.limit }),
      },
    };
  }
}

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly field?: string; readonly limit?: LimitDetail };
}

/** The `404` for a resource of `kind`: also what another user's id answers, so ids leak nothing. */
export function notFound(code: 'JOB_NOT_FOUND' | 'SCHEDULE_NOT_FOUND' | 'WEBSITE_NOT_FOUND' | 'TARGET_NOT_FOUND' | 'WEBHOOK_NOT_FOUND' | 'DELIVERY_NOT_FOUND', id: string): ApiError {
  const kind = code.split('_')[0]!.toLowerCase();
  return new ApiError(code, `${kind} ${id} not found`);
}
