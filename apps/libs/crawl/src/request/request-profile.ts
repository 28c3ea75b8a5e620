/**
 * A job's request options, ready to send: the headers of one request to one URL, HTTP and browser
 * alike, and the cookies a browser context starts with.
 *
 * Cookies go through a tough-cookie jar, so each request carries only the cookies whose domain,
 * path and Secure flag match its URL (a redirect to another site takes none of them). The user's
 * own headers (often credentials: an `Authorization`, an API key) go only to the origin of the page
 * being fetched: not along a redirect to another origin, not to a rendered page's scripts, images
 * or calls elsewhere (a CDN, an analytics host). User-Agent and Accept-Language go everywhere.
 *
 * Built once per spec object (a WeakMap), since a job's spec is the same object for each of its pages.
 */
import type { CrawlSpec } from '@trawl/schemas';
import { Cookie, CookieJar } from 'tough-cookie';
import { acceptLanguageOf, hasRequestOptions, requestOptionsKey, type SpecRequestOptions } from '@trawl/schemas';
import type { CredentialOpener } from './credentials.ts';

/** What a fetch is told about the job's request options. */
export interface RequestProfile {
  /** requestOptionsKey: '' for none. Caches keyed by what a site answered (robots.txt) add it to their key. */
  readonly key: string;
  /** The crawl's own User-Agent; null: the fetcher's default. */
  readonly userAgent: string | null;
  /** The crawl's BCP 47 locale; null: the default. */
  readonly locale: string | null;
  /**
   * Headers for one request to `url` (a fetch that started at `startUrl`: the page's own URL):
   * the user's headers when `url` is on the page's origin, Accept-Language of the locale,
   * User-Agent of the crawl, and the Cookie its URL matches.
   * Lower-case names; what is absent is the fetcher's default.
   */
  headersFor(url: string, startUrl: string): Record<string, string>;
  /** The initial cookies, for a browser context (CDP's shape). */
  browserCookies(): BrowserCookie[];
  /**
   * The Set-Cookie headers one response (a redirect hop included) answered `url` with. A session's
   * profile (session/session-jar.ts) keeps them in its jar, so its next requests carry them; the
   * job's fixed options ignore them (absent).
   */
  receive?(url: string, setCookies: readonly string[]): void;
  /**
   * The cookies a browser context holds after a render (what the page and its scripts set). Present
   * on a session's profile only: the browser fetcher then renders in a context of the render's own
   * (never the shared one) and hands its cookies back before closing it.
   */
  receiveBrowserCookies?(cookies: readonly BrowserCookie[]): void;
}

export interface BrowserCookie {
  readonly name: string;
  readonly value: string;
  readonly domain: string;
  readonly path: string;
  readonly secure: boolean;
  readonly httpOnly: boolean;
  readonly sameSite?: 'Strict' | 'Lax' | 'None';
  readonly expires?: number;
}

const profiles = new WeakMap<object, RequestProfile | null>();

/**
 * The profile of a spec's options; null when it has none (the fetch is what it always was). The
 * spec's credentials must be clear already (openSpecCredentials). `fingerprint` (the worker's
 * CredentialOpener) keys the profile's `key`, so that no bare hash of a credential is kept.
 */
export function requestProfileOf(spec: Partial<Pick<CrawlSpec, 'headers' | 'user_agent' | 'locale' | 'cookies'>>, credentials?: Pick<CredentialOpener, 'fingerprint'>): RequestProfile | null {
  let profile = profiles.get(spec);
  if (profile === undefined) {
    const options: SpecRequestOptions = { headers: spec.headers ?? {}, user_agent: spec.user_agent ?? null, locale: spec.locale ?? null, cookies: spec.cookies ?? {} };
    profile = hasRequestOptions(options) ? buildProfile(options, credentials) : null;
    profiles.set(spec, profile);
  }
  return profile;
}

function buildProfile(options: SpecRequestOptions, credentials: Pick<CredentialOpener, 'fingerprint'> | undefined): RequestProfile {
  const jar = new CookieJar(undefined, { rejectPublicSuffixes: true, looseMode: false, allowSpecialUseDomain: true });
  const cookies: Cookie[] = [];
  for (const [domain, list] of Object.entries(options.cookies)) {
    for (const raw of list) {
      const cookie = Cookie.parse(raw, { loose: false });
      if (!cookie) continue;
      // Checked by the API before it was stored; one that fails here (an older spec) is left out, silently: its value is a credential.
      const set = jar.setCookieSync(cookie, `https://${domain}/`, { ignoreError: true });
      if (set) cookies.push(set);
    }
  }
  const own: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers)) own[name.toLowerCase()] = value;
  const general: Record<string, string> = {};
  if (options.locale) general['accept-language'] = acceptLanguageOf(options.locale);
  if (options.user_agent) general['user-agent'] = options.user_agent;
  const withCookies = cookies.length > 0;
  return {
    key: credentials ? credentials.fingerprint(requestOptionsKey(options)) : requestOptionsKey(options),
    userAgent: options.user_agent,
    locale: options.locale,
    headersFor(url: string, startUrl: string): Record<string, string> {
      const headers = sameOrigin(url, startUrl) ? { ...own, ...general } : { ...general };
      if (withCookies) {
        const cookie = jar.getCookieStringSync(url);
        if (cookie) headers.cookie = cookie;
      }
      return headers;
    },
    browserCookies(): BrowserCookie[] {
      return cookies.map((c) => ({
        name: c.key,
        value: c.value,
        domain: c.hostOnly ? c.domain! : `.${c.domain!}`,
        path: c.path ?? '/',
        secure: c.secure,
        httpOnly: c.httpOnly,
        ...(c.sameSite && c.sameSite !== 'none' ? { sameSite: c.sameSite === 'strict' ? ('Strict' as const) : ('Lax' as const) } : {}),
        ...(c.expires instanceof Date ? { expires: Math.floor(c.expires.getTime() / 1000) } : {}),
      }));
    },
  };
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
