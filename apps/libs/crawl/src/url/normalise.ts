import { InvalidUrlError } from '../errors.ts';
import { uuidV5 } from '@trawl/schemas';

/**
 * One canonical spelling per page, so that per-job dedupe (invariant 4) compares strings.
 *
 * WHATWG `URL` already lowercases scheme and host, drops the default port, resolves `.`/`..`,
 * turns IDNs into punycode and canonicalises decimal/octal/hex IPv4 forms. On top of it we drop the
 * fragment, user info (a crawler never sends credentials found in a link), tracking parameters, and
 * sort the query by key, and we normalise percent-encoding (RFC 3986 §6.2.2.2: unreserved characters
 * decoded, hex digits upper-cased). Trailing slashes are kept: `/a` and `/a/` may be different pages.
 */

/** Query keys that never change the page, only the analytics. */
const TRACKING_KEY = /^(?:utm_[^=]*|gclid|fbclid|msclkid)$/i;
const PERCENT_ESCAPE = /%([0-9a-fA-F]{2})/g;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** The normalised URL, or null when the input is not an absolute (or base-relative) http(s) URL. Never throws: it runs for every link of every page. */
export function normaliseUrlOrNull(raw: string, base?: string | URL): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.hostname === '') return null;
  // Fragment and user info are left out by building the string from the parts kept: each URL
  // setter (`url.hash = ''`) re-serialises the whole URL, for every link of every page.
  const path = normalisePercent(url.pathname);
  const query = normaliseQuery(url.search);
  return `${url.protocol}//${url.host}${path}${query}`;
}

/** As {@link normaliseUrlOrNull}, but throws {@link InvalidUrlError} saying why. */
export function normaliseUrl(raw: string, base?: string | URL): string {
  const out = normaliseUrlOrNull(raw, base);
  if (out !== null) return out;
  let scheme = '';
  try {
    scheme = new URL(raw.trim(), base).protocol;
  } catch {
    throw new InvalidUrlError(`not a URL: ${truncate(raw)}`);
  }
  throw new InvalidUrlError(`unsupported scheme ${scheme} (only http and https are crawled): ${truncate(raw)}`);
}

const FETCH_ID_NAMESPACE = '3f0d6c2a-8b1e-4f57-9a3c-5e7b2d9f1c48';

/**
 * The id of "fetch this URL for this job": the same normalised URL is requested once per job, and a
 * frontier re-run after a crash derives the same id. `url` must already be normalised.
 */
export function fetchId(jobId: string, url: string): string {
  return uuidV5(`${jobId}\n${url}`, FETCH_ID_NAMESPACE);
}

function normaliseQuery(search: string): string {
  if (search.length <= 1) return '';
  const pairs = search.slice(1).split('&');
  const kept: { key: string; pair: string }[] = [];
  for (const pair of pairs) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const key = normalisePercent(rawKey);
    if (TRACKING_KEY.test(safeDecode(key))) continue;
    const value = eq === -1 ? '' : `=${normalisePercent(pair.slice(eq + 1))}`;
    kept.push({ key, pair: key + value });
  }
  if (kept.length === 0) return '';
  // Stable sort by key only: the order of repeated keys (a=2&a=1) can carry meaning.
  kept.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return `?${kept.map((p) => p.pair).join('&')}`;
}

function normalisePercent(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(PERCENT_ESCAPE, (_m, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function truncate(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}
