/**
 * Request options as JSON Schema, for `POST /crawl`, a schedule's request and a website. The
 * schema bounds shape and size coarsely; what each value may be (no Host or hop-by-hop header, no
 * CR/LF, a BCP 47 locale, cookies that parse and belong to the crawl's hosts, the real count and
 * size limits) is checked by `@trawl/crawl`'s checkRequestOptions, which answers with its own codes.
 */
/** A header value or a cookie: literal, or `{"secret": "<name>"}` (one of your secrets, POST /secrets); sealed before it is stored or sent. */
function credentialOf(literal: { readonly type: 'string'; readonly minLength?: number; readonly maxLength: number }) {
  return {
    oneOf: [
      literal,
      { type: 'object', additionalProperties: false, required: ['secret'], properties: { secret: { type: 'string', minLength: 1, maxLength: 128, description: 'the name of one of your secrets' } } },
    ],
  } as const;
}

export const requestOptionProperties = {
  headers: {
    type: 'object',
    maxProperties: 64,
    propertyNames: { minLength: 1, maxLength: 256 },
    additionalProperties: credentialOf({ type: 'string', maxLength: 8192 }),
    description:
      'extra request headers, sent with every page, robots.txt and sitemap request, HTTP and browser alike (at most 32, 8 KiB with the user agent). A value is a literal or `{"secret": "<name>"}` (POST /secrets); either way it is sealed before it is stored or sent, and never shown again. Refused: `Host`, hop-by-hop headers (`Connection`, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`), and those set otherwise (`User-Agent` → `user_agent`, `Accept-Language` → `locale`, `Cookie` → `cookies`, `Accept-Encoding`, `Content-Length`, `Expect`, conditional and range headers); names must be RFC 7230 tokens, values without CR, LF or NUL. `Authorization` is not sent on a redirect to another origin. Over a website\'s headers name by name',
  },
  user_agent: {
    type: 'string',
    minLength: 1,
    maxLength: 512,
    description: "the User-Agent of this crawl's requests (default: the server's, `Trawl/<version> (+<contact URL>)`). robots.txt is still matched against the server's product token (`Trawl`)",
  },
  locale: {
    type: 'string',
    minLength: 1,
    maxLength: 35,
    description: 'a BCP 47 language tag (`fr-CH`): sent as `Accept-Language: fr-CH,fr;q=0.9`, and the browser\'s locale (`navigator.language`, `Intl`) for rendered pages',
  },
  cookies: {
    type: 'object',
    maxProperties: 16,
    propertyNames: { minLength: 1, maxLength: 253 },
    additionalProperties: { type: 'array', maxItems: 64, items: credentialOf({ type: 'string', minLength: 1, maxLength: 4096 }) },
    description:
      'initial cookies by domain: `{"shop.example": ["consent=yes", "sid=abc; Path=/account"]}`. Each is a Set-Cookie string (RFC 6265: `name=value` and attributes such as `Path`, `Domain`, `Secure`), sent only to the URLs it matches; the domain must be a host of the crawl (a start URL\'s, the website\'s base URL or `allowed_hosts`) or a parent of one. At most 64 cookies, 16 KiB. A crawl\'s list for a domain replaces the website\'s. A cookie is a literal or `{"secret": "<name>"}` (a secret holding the Set-Cookie string); cookies are credentials: sealed before they are stored or sent, never logged nor echoed in errors',
  },
} as const;

/** A website's options: stored, so absent ones read back as their defaults. */
export const websiteRequestOptionProperties = {
  headers: { ...requestOptionProperties.headers, default: {} },
  user_agent: { ...requestOptionProperties.user_agent, type: ['string', 'null'], default: null },
  locale: { ...requestOptionProperties.locale, type: ['string', 'null'], default: null },
  cookies: { ...requestOptionProperties.cookies, default: {} },
} as const;

/** A credential: a literal (sealed as soon as it arrives) or the name of one of your secrets (`POST /secrets`). */
const credential = {
  oneOf: [
    { type: 'string', minLength: 1, maxLength: 8192 },
    {
      type: 'object',
      additionalProperties: false,
      required: ['secret'],
      properties: { secret: { type: 'string', minLength: 1, maxLength: 128, description: 'the name of one of your secrets' } },
    },
  ],
  description: 'a literal value or `{"secret": "<name>"}`; either way sealed before it is stored, never shown again',
} as const;

const proxyUrl = { type: 'string', minLength: 1, maxLength: 2048, description: '`http://`, `https://` or `socks5://` host and port, without credentials' } as const;

const proxyEntry = {
  oneOf: [
    proxyUrl,
    {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: { url: proxyUrl, username: credential, password: credential },
    },
  ],
} as const;

const browserAction = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['wait_for', 'click', 'scroll', 'type', 'press', 'wait', 'screenshot'] },
    selector: { type: 'string', minLength: 1, maxLength: 500, description: 'wait_for, click, type: the element; scroll: scroll until it appears' },
    text: credential,
    key: { type: 'string', minLength: 1, maxLength: 32, description: 'press: a key name (`Enter`, `Tab`, `ArrowDown`…)' },
    ms: { type: 'integer', minimum: 0, maximum: 60_000, description: "wait: how long; others: the action's own time limit" },
    times: { type: 'integer', minimum: 1, maximum: 100, description: 'scroll: how many times (default: until no new content)' },
    full_page: { type: 'boolean', description: 'screenshot: the whole page' },
  },
} as const;

const patternList = { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 500 } } as const;

/**
 * Reach options: proxies, sessions, a login, browser actions, block patterns,
 * adaptive throttling and link rules. On a website, a schedule's request and `POST /crawl`; the
 * most specific layer that sets an option wins it whole. What each value may be is checked by
 * `@trawl/crawl`'s checkReachOptions.
 */
export const reachOptionProperties = {
  proxy: { ...proxyUrl, description: 'one proxy for every request of the crawl (shorthand for `proxies: [url]`)' },
  proxies: { type: 'array', minItems: 1, maxItems: 100, items: proxyEntry, description: 'a pool of proxies: URLs, or `{url, username, password}` with credentials literal or by secret name' },
  proxy_rotation: { type: 'string', enum: ['round_robin', 'random', 'per_session'], description: 'how requests pick a proxy of the pool (default round_robin; per_session: each session keeps one)' },
  sessions: { type: 'integer', minimum: 0, maximum: 100, description: 'size of the session pool: each session has its own cookie jar (and a sticky proxy with per_session); 0 (default): none' },
  login: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['kind', 'url'],
    properties: {
      kind: { type: 'string', enum: ['form', 'browser'] },
      url: { type: 'string', format: 'http-url', maxLength: 2048, description: 'the login page' },
      form_selector: { type: 'string', minLength: 1, maxLength: 500, description: 'form: the form (default: the first with a password field)' },
      fields: { type: 'object', maxProperties: 20, propertyNames: { minLength: 1, maxLength: 256 }, additionalProperties: credential, description: 'form: field values over the form\'s own (hidden fields such as a CSRF token are kept)' },
      actions: { type: 'array', maxItems: 200, items: browserAction, description: 'browser: the actions that log in (at most 50: `ACTIONS_TOO_MANY`)' },
      success_selector: { type: 'string', minLength: 1, maxLength: 500 },
      success_url_pattern: { type: 'string', minLength: 1, maxLength: 500, description: 'RE2' },
      failure_text: { type: 'string', minLength: 1, maxLength: 500 },
    },
    description: 'a login run once per session before its first page (needs `sessions` ≥ 1); a failed one fails the job `LOGIN_FAILED`',
  },
  // The schema bounds the body; the 50 a page runs are checked by checkReachOptions, with their own code.
  actions: { type: 'array', maxItems: 200, items: browserAction, description: 'browser actions run in order after each page loads, before extraction (implies the browser); at most 50 (`ACTIONS_TOO_MANY`)' },
  block_patterns: { ...patternList, maxItems: 32, description: 'RE2 patterns: a page whose body matches one is BLOCKED (not stored, retried on another session)' },
  adaptive_throttle: { type: 'boolean', description: "adapt each host's delay and concurrency to its latency and errors (never above the website's limits or robots' Crawl-delay)" },
  include_patterns: { ...patternList, description: "RE2 patterns a followed link must match one of (replaces the website's)" },
  exclude_patterns: { ...patternList, description: "RE2 patterns a followed link must match none of (replaces the website's)" },
  scope: { type: 'string', enum: ['same_host', 'same_domain', 'any'], description: "which links are followed: the start URL's host (default), its registrable domain, or any host" },
  follow_nofollow: { type: 'boolean', description: 'follow links marked rel=nofollow (default false)' },
  only_main_content: { type: 'boolean', description: "the `text` and `markdown` formats hold the page's main content only (Mozilla Readability: navigation, headers, footers and ads dropped); default false: the whole body without scripts and styles" },
  downloads: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['types', 'max_bytes'],
    properties: {
      types: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', pattern: '^[A-Za-z0-9.+-]+/(\\*|[A-Za-z0-9.+-]+)$', maxLength: 100 }, description: 'media types of the linked files to keep (`application/pdf`, `image/*`): a link (`a`, `img`, `source`, `embed`, `object`) is fetched when its extension names one, kept when its Content-Type is one' },
      max_bytes: { type: 'integer', minimum: 1, maximum: 104_857_600, description: "a larger file is not kept (the worker's TRAWL_DOWNLOADS_MAX_BYTES caps it too)" },
    },
    description: "linked files each page's fetch also fetches (as fetches of the job: robots.txt, politeness, egress rules) and keeps in the content store by their sha-256, once per hash; listed per page (`downloads` of `GET /jobs/:id/pages`), at most 10 a page (TRAWL_DOWNLOADS_MAX_PER_PAGE)",
  },
} as const;

/** A website's reach options: include/exclude patterns are the website's own fields already. */
const { include_patterns: _include, exclude_patterns: _exclude, ...websiteReach } = reachOptionProperties;
export const websiteReachOptionProperties = websiteReach;
