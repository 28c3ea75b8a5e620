/**
 * Request options as JSON Schema, for `POST /crawl`, a schedule's request and a website. The
 * schema bounds shape and size coarsely; what each value may be (no Host or hop-by-hop header, no
 * CR/LF, a BCP 47 locale, cookies that parse and belong to the crawl's hosts, the real count and
 * size limits) is checked by `@trawl/crawl`'s checkRequestOptions, which answers with its own codes.
 */
export const requestOptionProperties = {
  headers: {
    type: 'object',
    maxProperties: 64,
    propertyNames: { minLength: 1, maxLength: 256 },
    additionalProperties: { type: 'string', maxLength: 8192 },
    description:
      'extra request headers, sent with every page, robots.txt and sitemap request, HTTP and browser alike (at most 32, 8 KiB with the user agent). Refused: `Host`, hop-by-hop headers (`Connection`, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`), and those set otherwise (`User-Agent` → `user_agent`, `Accept-Language` → `locale`, `Cookie` → `cookies`, `Accept-Encoding`, `Content-Length`, `Expect`, conditional and range headers); names must be RFC 7230 tokens, values without CR, LF or NUL. `Authorization` is not sent on a redirect to another origin. Over a website\'s headers name by name',
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
    additionalProperties: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 4096 } },
    description:
      'initial cookies by domain: `{"shop.example": ["consent=yes", "sid=abc; Path=/account"]}`. Each is a Set-Cookie string (RFC 6265: `name=value` and attributes such as `Path`, `Domain`, `Secure`), sent only to the URLs it matches; the domain must be a host of the crawl (a start URL\'s, the website\'s base URL or `allowed_hosts`) or a parent of one. At most 64 cookies, 16 KiB. A crawl\'s list for a domain replaces the website\'s. Cookie values are credentials: never logged nor echoed in errors, but carried in clear in the job\'s events for now',
  },
} as const;

/** A website's options: stored, so absent ones read back as their defaults. */
export const websiteRequestOptionProperties = {
  headers: { ...requestOptionProperties.headers, default: {} },
  user_agent: { ...requestOptionProperties.user_agent, type: ['string', 'null'], default: null },
  locale: { ...requestOptionProperties.locale, type: ['string', 'null'], default: null },
  cookies: { ...requestOptionProperties.cookies, default: {} },
} as const;
