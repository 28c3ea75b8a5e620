/**
 * The identity of a crawl request, for dedupe: the same spider, the same set of start URLs (order
 * and duplicates do not matter), the same depth and the same params. `max_pages` is deliberately
 * left out: a repeat that only asks for a different page budget is the same crawl. Request options
 * (headers, user agent, locale, cookies) are in it: the same URLs fetched with other cookies are
 * another crawl.
 *
 * The request options count by a keyed fingerprint (`fingerprint`: SecretBox.fingerprint through
 * credentialFingerprint, HMAC under a key from TRAWL_SECRETS_KEY) of their clear values: the same
 * cookies give the same key although each job's spec seals them anew, and the key — stored in
 * crawl_dedupe and carried by CrawlRequested — is no bare hash a guessed password can be checked
 * against. The input must hold clear values (sealCredentials' `clear`), never `{secret}` references.
 *
 * URLs are compared after WHATWG parsing (lower-case scheme and host, default port dropped,
 * dot-segments resolved) and without their fragment, which never reaches the server.
 */
import { createHash } from 'node:crypto';
import { requestOptionsKey, type RequestOptions } from '@trawl/schemas';

export interface DedupeInput extends RequestOptions {
  readonly spider: string | null;
  readonly start_urls: readonly string[];
  readonly depth: number;
  readonly params: Readonly<Record<string, string>>;
  /** Content formats: a crawl asking for content is another crawl than one that does not. */
  readonly formats?: readonly string[];
  /** What start URLs do with a site's sitemaps; absent means the default, `include`. */
  readonly sitemap?: 'include' | 'only' | 'skip';
}

export function canonicalUrl(raw: string): string {
  const url = new URL(raw);
  url.hash = '';
  return url.href;
}

/** Start URLs in canonical spelling, sorted, without duplicates. */
export function canonicalStartUrls(urls: readonly string[]): string[] {
  return [...new Set(urls.map(canonicalUrl))].sort();
}

/** The reach options of a request, as its layer keeps them (schemas request-options.ts). */
const REACH_FIELDS = ['proxies', 'proxy_rotation', 'sessions', 'login', 'actions', 'block_patterns', 'adaptive_throttle', 'include_patterns', 'exclude_patterns', 'scope', 'follow_nofollow', 'only_main_content', 'downloads'] as const satisfies readonly (keyof DedupeInput)[];

/** JSON with object keys sorted, so that equal options give equal text whatever their order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

export function dedupeKey(input: DedupeInput, fingerprint: (text: string) => string): string {
  const params = Object.keys(input.params)
    .sort()
    .map((k) => [k, input.params[k]]);
  const formats = [...new Set(input.formats ?? [])].sort();
  // Without formats the key is what it was before formats existed, so earlier dedupe rows still match.
  const parts: unknown[] = [input.spider ?? null, canonicalStartUrls(input.start_urls), input.depth, params];
  if (formats.length > 0) parts.push(formats);
  // Likewise the default sitemap mode adds nothing; another mode is another crawl.
  if (input.sitemap !== undefined && input.sitemap !== 'include') parts.push({ sitemap: input.sitemap });
  // Request options make another crawl (a site answers them differently); by fingerprint, so the key holds no cookie.
  const options = requestOptionsKey(input);
  if (options !== '') parts.push({ request: fingerprint(options) });
  // Reach options set by the request (proxies, sessions, a login, actions, link rules…) make
  // another crawl too; absent ones add nothing, so keys from before them still match. They hold
  // credentials (a proxy's password, login fields): by keyed fingerprint as well.
  const reach = Object.fromEntries(REACH_FIELDS.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
  if (Object.keys(reach).length > 0) parts.push({ reach: fingerprint(canonicalJson(reach)) });
  const canonical = JSON.stringify(parts);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
