/** `POST /scrape`, `GET /scrape/:id` and `POST /map`: bodies and answers. */
import { USER_ID_PATTERN, errorResponses } from './common.ts';
import { reachOptionProperties, requestOptionProperties } from './request-options.ts';
import { SCRAPE_FORMATS } from '../scrape/scrape-service.ts';

const url = { type: 'string', format: 'http-url', maxLength: 2048, description: 'an absolute http(s) URL' } as const;
const timeoutMs = (dflt: string) => ({ type: 'integer', minimum: 1, description: `how long the answer waits for the page (ms; default ${dflt}); past it the answer is \`202\` with the job. Over the server's maximum (\`TRAWL_SCRAPE_MAX_TIMEOUT_MS\`, 120 s): \`TIMEOUT_TOO_LONG\`` }) as const;

const OPTION_ERRORS = ['URL_REFUSED', 'TIMEOUT_TOO_LONG', 'HEADER_NOT_ALLOWED', 'INVALID_HEADER', 'REQUEST_OPTIONS_TOO_LARGE', 'INVALID_LOCALE', 'INVALID_COOKIE', 'COOKIE_DOMAIN_NOT_CRAWLED', 'INVALID_PROXY', 'PROXY_NOT_ALLOWED', 'UNKNOWN_SECRET', 'QUOTA_EXCEEDED', 'INVALID_JSON', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const;

export const scrapeBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url,
    formats: {
      type: 'array',
      maxItems: 10,
      items: { type: 'string', maxLength: 40 },
      description: `what the answer holds: ${SCRAPE_FORMATS.map((f) => `\`${f}\``).join(', ')} (default \`["markdown"]\`; another value is \`UNSUPPORTED_FORMAT\`). \`screenshot\` and \`pdf\` render the page in Chromium and are answered as the path of the stored file; \`metadata\` is always there`,
    },
    timeout_ms: timeoutMs('`TRAWL_SCRAPE_TIMEOUT_MS`, 30 s'),
    spider: { type: 'string', pattern: USER_ID_PATTERN, description: 'a website whose selectors (items), request options and politeness apply' },
    params: { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 2000 } },
    max_age: { type: 'integer', minimum: 0, maximum: 31_536_000, description: 'seconds: reuse the page from your HTTP cache when fetched this recently (as `POST /crawl`). A scrape is never answered from an earlier job (no dedupe)' },
    ignore_cache: { type: 'boolean', description: 'fetch the page in full: no reuse within `max_age`, no conditional request' },
    store_in_cache: { type: 'boolean', description: "keep the page's body for the HTTP cache (as `POST /crawl`)" },
    content_retention: { type: 'integer', minimum: 1, description: "seconds the scrape's stored content is kept (as `POST /crawl`)" },
    ...requestOptionProperties,
    ...reachOptionProperties,
  },
} as const;

const metadataSchema = {
  type: 'object',
  additionalProperties: true,
  description: "the page's structured data, read by the worker's parse step (the `metadata` format), and figures of the fetch",
  required: ['title', 'description', 'language', 'canonical', 'social', 'status_code', 'content_type', 'fetch_ms', 'render_mode', 'from_cache'],
  properties: {
    title: { type: ['string', 'null'] },
    description: { type: ['string', 'null'] },
    language: { type: ['string', 'null'], description: '`<html lang>`' },
    canonical: { type: ['string', 'null'] },
    social: { type: 'object', additionalProperties: { type: 'string' }, description: 'OpenGraph (`og:*`) and Twitter card (`twitter:*`) properties, the first value of each' },
    open_graph: { type: 'object', additionalProperties: true, description: 'OpenGraph properties (`og:*`, `article:*`, `product:*`…) by name; a repeated one (`og:image`) is a list' },
    twitter: { type: 'object', additionalProperties: true, description: 'Twitter card properties (`twitter:*`) by name' },
    json_ld: { type: 'array', items: {}, description: 'each JSON-LD block (`<script type="application/ld+json">`) parsed, in page order' },
    json_ld_invalid: { type: 'integer', description: 'JSON-LD blocks that did not parse: skipped' },
    microdata: { type: 'array', items: { type: 'object', additionalProperties: true }, description: 'microdata items (`itemscope`): `{type?, id?, properties: {name: [value | item]}}`' },
    status_code: { type: ['integer', 'null'] },
    content_type: { type: ['string', 'null'] },
    fetch_ms: { type: ['integer', 'null'] },
    render_mode: { type: ['string', 'null'] },
    from_cache: { type: ['string', 'null'] },
  },
} as const;

export const scrapeResultSchema = {
  $id: 'ScrapeResult',
  type: 'object',
  description: "the page's outcome. `ok: false` when it failed (`error` says why; `status` is the HTTP status when there was one): the scrape itself worked, so the answer is still `200`",
  required: ['job_id', 'url', 'ok'],
  properties: {
    job_id: { type: 'string', format: 'uuid', description: 'the scrape\'s job (`GET /jobs/{id}`)' },
    url: { type: 'string' },
    ok: { type: 'boolean' },
    status: { type: ['integer', 'null'] },
    final_url: { type: ['string', 'null'] },
    fetch_id: { type: 'string' },
    metadata: metadataSchema,
    formats: {
      type: 'object',
      additionalProperties: true,
      description:
        'each format asked for, by name: `markdown`, `html`, `text` (strings; null when not stored: the page was not HTML); `links` (the links the crawl rules keep; null when answered from the read model); `screenshot`, `pdf` (the path of the stored file, `GET /jobs/{id}/pages/{fetch_id}/content?format=…`)',
    },
    item_count: { type: ['integer', 'null'], description: "items extracted by the spider's selectors (`GET /jobs/{id}/items`)" },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: ['string', 'null'] }, message: { type: ['string', 'null'] } } },
  },
} as const;

export const scrapePendingSchema = {
  $id: 'ScrapePending',
  type: 'object',
  description: '`timeout_ms` passed before the page\'s outcome: the job goes on; `result_url` answers once it is known',
  required: ['job_id', 'status', 'status_url', 'result_url'],
  properties: {
    job_id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['pending'] },
    status_url: { type: 'string' },
    result_url: { type: 'string', description: '`GET` it for the result (`202` again while there is none)' },
  },
} as const;

export const scrapeResponses = {
  200: { description: scrapeResultSchema.description, $ref: 'ScrapeResult#' },
  202: { description: scrapePendingSchema.description, $ref: 'ScrapePending#' },
  ...errorResponses('UNSUPPORTED_FORMAT', 'UNKNOWN_SPIDER', 'MISSING_PARAM', 'ACTIONS_TOO_MANY', 'INVALID_ACTION', 'INVALID_LOGIN', 'LOGIN_NEEDS_SESSIONS', 'UNSUPPORTED_PATTERN', 'UNSUPPORTED_SELECTOR', 'RETENTION_TOO_LONG', ...OPTION_ERRORS),
} as const;

export const mapBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url,
    search: { type: 'string', minLength: 1, maxLength: 500, description: 'only URLs containing this (case-insensitive)' },
    limit: { type: 'integer', minimum: 1, maximum: 5000, default: 100, description: 'the most URLs answered (default 100)' },
    include_subdomains: { type: 'boolean', description: "also the links and sitemap URLs of the site's subdomains (default false)" },
    sitemap: { type: 'string', enum: ['include', 'only', 'skip'], description: "`include` (default): the site's sitemaps and the page's links; `only`: the sitemaps alone; `skip`: the links alone" },
    timeout_ms: timeoutMs('`TRAWL_MAP_TIMEOUT_MS`, 15 s'),
    headers: requestOptionProperties.headers,
    user_agent: requestOptionProperties.user_agent,
    locale: requestOptionProperties.locale,
    cookies: requestOptionProperties.cookies,
    proxy: reachOptionProperties.proxy,
    proxies: reachOptionProperties.proxies,
  },
} as const;

export const mapResponses = {
  200: {
    description: "the site's URLs: the page itself, its links kept by the crawl rules, its sitemaps' URLs — of its host (and `www.`), or its subdomains too; `ok: false` when the page failed (`error`)",
    type: 'object',
    required: ['job_id', 'url', 'ok', 'links'],
    properties: {
      job_id: { type: 'string', format: 'uuid' },
      url: { type: 'string' },
      ok: { type: 'boolean' },
      links: { type: 'array', items: { type: 'string' } },
      error: scrapeResultSchema.properties.error,
    },
  },
  202: { description: scrapePendingSchema.description, $ref: 'ScrapePending#' },
  ...errorResponses(...OPTION_ERRORS),
} as const;
