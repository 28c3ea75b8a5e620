/**
 * Whether request options may be sent as they are, checked where they are configured (the API
 * answers 400 and stores nothing). Pure: the same function judges a website, a schedule's request
 * and a crawl.
 *
 * Headers: a name must be an RFC 7230 token and a value printable (no CR, LF, NUL or other control
 * character: header injection); `Host` and the hop-by-hop headers (RFC 7230 §6.1: Connection,
 * Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade) belong to the connection, not to the
 * request; and the headers Trawl sets itself are refused with the option that sets them
 * (User-Agent → `user_agent`, Accept-Language → `locale`, Cookie → `cookies`; Accept-Encoding,
 * because the fetcher decodes only what it offers; Content-Length and Expect on a GET; the
 * conditional and range headers, which the HTTP cache owns). Counts and sizes are bounded.
 *
 * Cookies: each is a Set-Cookie string parsed by tough-cookie (RFC 6265, strict), set for its
 * domain as a jar would (a Domain attribute must cover that domain and not be a public suffix),
 * and the domain must be one the crawl fetches from. Messages name the field, never a value:
 * cookie values are credentials, and an error answer is no place for them.
 */
import { Cookie, CookieJar, getPublicSuffix } from 'tough-cookie';
import type { RequestOptions } from '@trawl/schemas';

export type RequestOptionsCode = 'HEADER_NOT_ALLOWED' | 'INVALID_HEADER' | 'REQUEST_OPTIONS_TOO_LARGE' | 'INVALID_LOCALE' | 'INVALID_COOKIE' | 'COOKIE_DOMAIN_NOT_CRAWLED';

export interface RequestOptionsProblem {
  readonly code: RequestOptionsCode;
  /** Dotted path of the field at fault, under the caller's prefix (`headers.x-token`, `cookies.shop.example.0`). */
  readonly field: string;
  readonly message: string;
}

export const REQUEST_OPTION_LIMITS = {
  maxHeaders: 32,
  /** Names and values of all headers together, with the user agent. */
  maxHeaderBytes: 8 * 1024,
  maxUserAgentLength: 512,
  maxCookieDomains: 16,
  maxCookies: 64,
  /** RFC 6265 §6.1: user agents keep at least 4096 bytes per cookie. */
  maxCookieBytes: 4096,
  maxAllCookieBytes: 16 * 1024,
} as const;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters but HTAB: CR and LF split a header, NUL ends it in some servers. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-connection']);
const OWN: Readonly<Record<string, string>> = {
  'user-agent': 'set it with `user_agent`',
  'accept-language': 'set it with `locale`',
  cookie: 'set cookies with `cookies`',
  'accept-encoding': 'the fetcher asks for the encodings it decodes',
  'content-length': 'requests are GETs without a body',
  expect: 'requests are GETs without a body',
  'if-none-match': 'the HTTP cache makes conditional requests',
  'if-modified-since': 'the HTTP cache makes conditional requests',
  'if-match': 'the HTTP cache makes conditional requests',
  'if-unmodified-since': 'the HTTP cache makes conditional requests',
  'if-range': 'the HTTP cache makes conditional requests',
  range: 'a page is fetched whole',
};

/**
 * The first problem of `options`, or null. `crawlHosts`: the hosts the crawl fetches from (start
 * URLs, the website's base URL, `allowed_hosts`, which may be `*.example.com`); null skips the
 * cookie domain check (the hosts are not known yet).
 */
export function checkRequestOptions(options: RequestOptions, crawlHosts: readonly string[] | null, prefix = ''): RequestOptionsProblem | null {
  return checkHeaders(options, prefix) ?? checkLocale(options, prefix) ?? checkCookies(options, crawlHosts, prefix);
}

function problem(code: RequestOptionsCode, field: string, message: string): RequestOptionsProblem {
  return { code, field, message: `${field} ${message}` };
}

function checkHeaders(options: RequestOptions, prefix: string): RequestOptionsProblem | null {
  const headers = Object.entries(options.headers ?? {});
  if (headers.length > REQUEST_OPTION_LIMITS.maxHeaders) return problem('REQUEST_OPTIONS_TOO_LARGE', `${prefix}headers`, `has ${headers.length} headers; at most ${REQUEST_OPTION_LIMITS.maxHeaders}`);
  let bytes = 0;
  const seen = new Set<string>();
  for (const [name, value] of headers) {
    const field = `${prefix}headers.${name}`;
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) return problem('INVALID_HEADER', `${prefix}headers`, `has a header name that is not an RFC 7230 token (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    if (seen.has(lower)) return problem('INVALID_HEADER', field, 'is given twice (header names are case-insensitive)');
    seen.add(lower);
    if (lower === 'host') return problem('HEADER_NOT_ALLOWED', field, 'is not allowed: the host is the URL\'s');
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-')) return problem('HEADER_NOT_ALLOWED', field, 'is not allowed: a hop-by-hop header belongs to the connection, not the request');
    if (OWN[lower]) return problem('HEADER_NOT_ALLOWED', field, `is not allowed: ${OWN[lower]}`);
    if (typeof value !== 'string' || CONTROL.test(value)) return problem('INVALID_HEADER', field, 'has a control character (CR, LF, NUL…) in its value');
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 4;
  }
  const ua = options.user_agent;
  if (ua !== undefined && ua !== null) {
    if (ua.trim() === '' || CONTROL.test(ua)) return problem('INVALID_HEADER', `${prefix}user_agent`, 'is empty or has a control character (CR, LF, NUL…)');
    if (ua.length > REQUEST_OPTION_LIMITS.maxUserAgentLength) return problem('REQUEST_OPTIONS_TOO_LARGE', `${prefix}user_agent`, `is longer than ${REQUEST_OPTION_LIMITS.maxUserAgentLength} characters`);
    bytes += Buffer.byteLength(ua);
  }
  if (bytes > REQUEST_OPTION_LIMITS.maxHeaderBytes) return problem('REQUEST_OPTIONS_TOO_LARGE', `${prefix}headers`, `come to ${bytes} bytes with the user agent; at most ${REQUEST_OPTION_LIMITS.maxHeaderBytes}`);
  return null;
}

function checkLocale(options: RequestOptions, prefix: string): RequestOptionsProblem | null {
  const locale = options.locale;
  if (locale === undefined || locale === null) return null;
  const field = `${prefix}locale`;
  // Intl's own parser of BCP 47 tags; it would also take a list, which a locale is not.
  if (locale.length > 35 || !/^[A-Za-z0-9-]+$/.test(locale)) return problem('INVALID_LOCALE', field, 'is not a BCP 47 language tag (such as `fr-CH` or `en`)');
  try {
    Intl.getCanonicalLocales(locale);
  } catch {
    return problem('INVALID_LOCALE', field, 'is not a BCP 47 language tag (such as `fr-CH` or `en`)');
  }
  return null;
}

function checkCookies(options: RequestOptions, crawlHosts: readonly string[] | null, prefix: string): RequestOptionsProblem | null {
  const domains = Object.entries(options.cookies ?? {});
  const L = REQUEST_OPTION_LIMITS;
  if (domains.length > L.maxCookieDomains) return problem('REQUEST_OPTIONS_TOO_LARGE', `${prefix}cookies`, `has ${domains.length} domains; at most ${L.maxCookieDomains}`);
  let count = 0;
  let bytes = 0;
  const jar = new CookieJar(undefined, { rejectPublicSuffixes: true, looseMode: false, prefixSecurity: 'strict', allowSpecialUseDomain: true });
  for (const [domain, list] of domains) {
    const at = `${prefix}cookies.${domain}`;
    if (!isHostName(domain)) return problem('INVALID_COOKIE', `${prefix}cookies`, 'has a key that is not a host name (such as `shop.example`: no scheme, port or path)');
    if (isPublicSuffix(domain)) return problem('COOKIE_DOMAIN_NOT_CRAWLED', at, 'is a public suffix: cookies are set for a site, not for everyone under it');
    if (crawlHosts !== null && !crawlHosts.some((h) => domainCovers(domain, h))) {
      return problem('COOKIE_DOMAIN_NOT_CRAWLED', at, `is not a host of this crawl (its start URLs, the website's base URL and allowed_hosts): ${crawlHosts.join(', ') || 'none'}`);
    }
    if (!Array.isArray(list)) return problem('INVALID_COOKIE', at, 'must be a list of Set-Cookie strings');
    for (const [i, raw] of list.entries()) {
      const field = `${at}.${i}`;
      count++;
      if (count > L.maxCookies) return problem('REQUEST_OPTIONS_TOO_LARGE', `${prefix}cookies`, `has more than ${L.maxCookies} cookies`);
      if (typeof raw !== 'string' || CONTROL.test(raw)) return problem('INVALID_COOKIE', field, 'has a control character (CR, LF, NUL…)');
      const size = Buffer.byteLength(raw);
      if (size > L.maxCookieBytes) return problem('REQUEST_OPTIONS_TOO_LARGE', field, `is over ${L.maxCookieBytes} bytes`);
      bytes += size;
      const cookie = Cookie.parse(raw, { loose: false });
      if (!cookie || cookie.key === '') return problem('INVALID_COOKIE', field, 'does not parse as a Set-Cookie string (RFC 6265: `name=value` then `; Attribute` pairs)');
      try {
        jar.setCookieSync(cookie, `https://${domain}/`);
      } catch (err) {
        // tough-cookie's reasons name domains and attributes, not values.
        return problem('INVALID_COOKIE', field, `cannot be set for ${domain}: ${(err as Error).message.replace(/ Cookie:.*$/, '')}`);
      }
    }
  }
  if (bytes > L.maxAllCookieBytes) return problem('REQUEST_OPTIONS_TOO_LARGE', `${prefix}cookies`, `come to ${bytes} bytes; at most ${L.maxAllCookieBytes}`);
  return null;
}

function isHostName(domain: string): boolean {
  if (domain === '' || domain !== domain.toLowerCase() || /[^a-z0-9.\-[\]:]/.test(domain)) return false;
  try {
    return new URL(`https://${domain}/`).hostname === domain;
  } catch {
    return false;
  }
}

function isPublicSuffix(domain: string): boolean {
  if (/^[\d.]+$/.test(domain) || domain.startsWith('[')) return false;
  try {
    return !getPublicSuffix(domain, { allowSpecialUseDomain: true });
  } catch {
    // A special-use name (localhost, *.test…): local, never a registry's suffix.
    return false;
  }
}

/**
 * Whether cookies for `domain` are for `host` (an `allowed_hosts` entry may be `*.example.com` or
 * `.example.com`): the host is the domain or under it, or the domain is under an allowed suffix.
 */
export function domainCovers(domain: string, host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^www\./, '');
  const d = domain.replace(/^www\./, '');
  if (h.startsWith('*.') || h.startsWith('.')) {
    const suffix = h.slice(h.indexOf('.') + 1);
    return d === suffix || d.endsWith(`.${suffix}`) || suffix.endsWith(`.${d}`);
  }
  return h === d || h.endsWith(`.${d}`);
}
