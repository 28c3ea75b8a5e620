/**
 * Request options: what a crawl sends besides the URL — extra `headers`, a `user_agent`, a `locale`
 * (Accept-Language and the browser's locale) and initial `cookies` by domain. They can be set on a
 * website, on a schedule (the request it stores) and on `POST /crawl`; the job's spec carries the
 * result of {@link mergeRequestOptions}.
 *
 * Merging, most specific last: a scalar (`user_agent`, `locale`) is the last layer's that sets it;
 * `headers` merge name by name (case-insensitive), so a crawl that adds one header keeps the
 * website's others; `cookies` merge domain by domain, a layer's list for a domain replacing the
 * earlier list for that domain whole (cookies of one site are set together: half of an old set and
 * half of a new one is a state no site ever gave). A layer cannot remove what an earlier one set:
 * change that layer instead.
 */
import { createHash } from 'node:crypto';
import type { BrowserAction, DownloadSpec, LinkScope, LoginSpec, ProxyRotation, ProxySpec } from './generated/events.ts';

export interface RequestOptions {
  /** Extra request headers by name; checked by checkRequestOptions (no Host, hop-by-hop, CR/LF…). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The User-Agent; null or absent: the operator's (TRAWL_USER_AGENT). */
  readonly user_agent?: string | null;
  /** A BCP 47 language tag (`fr-CH`); null or absent: the default Accept-Language. */
  readonly locale?: string | null;
  /** Set-Cookie strings (RFC 6265) by the domain they are set for (`shop.example`). */
  readonly cookies?: Readonly<Record<string, readonly string[]>>;
  /** Reach options below: each is the last layer's that sets it, whole (a list is not merged item by item). Credentials in them are sealed. */
  readonly proxies?: readonly ProxySpec[];
  readonly proxy_rotation?: ProxyRotation;
  /** Session pool size; 0: none. */
  readonly sessions?: number;
  readonly login?: LoginSpec | null;
  readonly actions?: readonly BrowserAction[];
  readonly block_patterns?: readonly string[];
  readonly adaptive_throttle?: boolean;
  readonly include_patterns?: readonly string[];
  readonly exclude_patterns?: readonly string[];
  readonly scope?: LinkScope | null;
  readonly follow_nofollow?: boolean;
  /** Text and Markdown of the main content only (Readability), not the whole body. */
  readonly only_main_content?: boolean;
  /** Linked files to keep in the content store; null: none. */
  readonly downloads?: DownloadSpec | null;
}

/** The reach options as a spec carries them. */
export interface SpecReachOptions {
  readonly proxies: readonly ProxySpec[];
  readonly proxy_rotation: ProxyRotation;
  readonly sessions: number;
  readonly login: LoginSpec | null;
  readonly actions: readonly BrowserAction[];
  readonly block_patterns: readonly string[];
  readonly adaptive_throttle: boolean;
  readonly include_patterns: readonly string[];
  readonly exclude_patterns: readonly string[];
  readonly scope: LinkScope | null;
  readonly follow_nofollow: boolean;
  readonly only_main_content: boolean;
  readonly downloads: DownloadSpec | null;
}

/** What a new crawl gets when no layer sets a reach option. */
export const DEFAULT_REACH_OPTIONS: SpecReachOptions = Object.freeze({
  proxies: Object.freeze([]),
  proxy_rotation: 'round_robin',
  sessions: 0,
  login: null,
  actions: Object.freeze([]),
  block_patterns: Object.freeze([]),
  adaptive_throttle: false,
  include_patterns: Object.freeze([]),
  exclude_patterns: Object.freeze([]),
  scope: null,
  follow_nofollow: false,
  only_main_content: false,
  downloads: null,
});

const REACH_FIELDS = Object.keys(DEFAULT_REACH_OPTIONS) as (keyof SpecReachOptions)[];

/**
 * The reach options of `layers` (least specific first): each field is the last layer's that sets
 * it (null counts as set only for `login`, `scope` and `downloads`, which a layer may clear).
 */
export function mergeReachOptions(...layers: readonly (RequestOptions | null | undefined)[]): SpecReachOptions {
  const merged: Record<string, unknown> = { ...DEFAULT_REACH_OPTIONS };
  for (const layer of layers) {
    if (!layer) continue;
    for (const field of REACH_FIELDS) {
      const value = layer[field];
      if (value !== undefined) merged[field] = value;
    }
  }
  return merged as unknown as SpecReachOptions;
}

/** The options as a spec carries them: every field present. */
export interface SpecRequestOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly user_agent: string | null;
  readonly locale: string | null;
  readonly cookies: Readonly<Record<string, readonly string[]>>;
}

export const NO_REQUEST_OPTIONS: SpecRequestOptions = Object.freeze({ headers: Object.freeze({}), user_agent: null, locale: null, cookies: Object.freeze({}) });

/** The options of `layers` (least specific first: website, schedule, crawl), field by field. Header names and cookie domains come out lower-case. */
export function mergeRequestOptions(...layers: readonly (RequestOptions | null | undefined)[]): SpecRequestOptions {
  const headers: Record<string, string> = {};
  const cookies: Record<string, readonly string[]> = {};
  let userAgent: string | null = null;
  let locale: string | null = null;
  for (const layer of layers) {
    if (!layer) continue;
    for (const [name, value] of Object.entries(layer.headers ?? {})) headers[name.toLowerCase()] = value;
    for (const [domain, list] of Object.entries(layer.cookies ?? {})) cookies[domain.toLowerCase()] = [...list];
    if (layer.user_agent !== undefined && layer.user_agent !== null) userAgent = layer.user_agent;
    if (layer.locale !== undefined && layer.locale !== null) locale = layer.locale;
  }
  return { headers, user_agent: userAgent, locale, cookies };
}

/** Whether the options change anything about a request (a spec from before they existed has none). */
export function hasRequestOptions(options: Partial<SpecRequestOptions>): boolean {
  return Object.keys(options.headers ?? {}).length > 0 || Object.keys(options.cookies ?? {}).length > 0 || !!options.user_agent || !!options.locale;
}

/**
 * A fingerprint of the options (hex SHA-256 of their canonical form, over clear values), '' when
 * there are none: what tells apart two crawls that differ only by them (the dedupe key) and the
 * robots.txt each sees. It is never kept or logged as it is — a bare hash of a short credential can
 * be checked against guesses — but keyed first (an HMAC under a key from TRAWL_SECRETS_KEY:
 * @trawl/store credentialFingerprint, the worker's CredentialOpener.fingerprint).
 */
export function requestOptionsKey(options: Partial<SpecRequestOptions>): string {
  if (!hasRequestOptions(options)) return '';
  const merged = mergeRequestOptions(options);
  const sorted = (o: Readonly<Record<string, unknown>>) => Object.keys(o).sort().map((k) => [k, o[k]]);
  const canonical = JSON.stringify([sorted(merged.headers), merged.user_agent, merged.locale, sorted(merged.cookies)]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/**
 * The Accept-Language of a locale: the tag first, then its language alone when the tag says more
 * (`fr-CH` → `fr-CH,fr;q=0.9`), as browsers send it.
 */
export function acceptLanguageOf(locale: string): string {
  const language = locale.split('-')[0]!;
  return language.toLowerCase() === locale.toLowerCase() ? locale : `${locale},${language};q=0.9`;
}
