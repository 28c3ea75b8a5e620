/**
 * One session's cookie jar (RFC 6265, tough-cookie): it starts from the crawl's own cookies
 * (CrawlSpec.cookies) and takes every Set-Cookie the session's responses answer, so the session's
 * next requests carry them — the consent cookie, the login's session cookie.
 *
 * The jar is a credential: it leaves the process only serialised and sealed (SessionUpdated.jar),
 * and nothing here logs it. `changed` tells the caller whether a response set anything, so an
 * unchanged jar is not written again. It is bounded ({@link JAR_LIMITS}): a site that sets cookie
 * after cookie loses its oldest ones, as a browser's jar does, so a session's record always fits
 * in one Kafka message.
 */
import type { CrawlSpec } from '@trawl/schemas';
import { Cookie, CookieJar } from 'tough-cookie';
import type { BrowserCookie, RequestProfile } from '../request/request-profile.ts';

const JAR_OPTIONS = { rejectPublicSuffixes: true, looseMode: false, allowSpecialUseDomain: true } as const;

/** At most this many cookies and serialised bytes per jar (browsers keep about 180 per site). */
export const JAR_LIMITS = { maxCookies: 300, maxBytes: 96 * 1024 } as const;

export class SessionJar {
  private dirty = false;

  private constructor(private readonly jar: CookieJar) {}

  /** A fresh jar with the spec's cookies (per domain, each a Set-Cookie line); one that does not parse is left out, silently: its value is a credential. */
  static fromSpec(spec: Pick<CrawlSpec, 'cookies'>): SessionJar {
    const jar = new CookieJar(undefined, JAR_OPTIONS);
    for (const [domain, list] of Object.entries(spec.cookies ?? {})) {
      for (const raw of list) {
        const cookie = Cookie.parse(raw, { loose: false });
        if (cookie) jar.setCookieSync(cookie, `https://${domain}/`, { ignoreError: true });
      }
    }
    return new SessionJar(jar);
  }

  /** The jar `serialize()` gave. */
  static deserialize(text: string): SessionJar {
    return new SessionJar(CookieJar.deserializeSync(text));
  }

  /** tough-cookie's JSON serialisation: what is sealed into SessionUpdated.jar. */
  serialize(): string {
    return JSON.stringify(this.jar.serializeSync());
  }

  /** Whether a response set or changed a cookie since the last `settled()`. */
  get changed(): boolean {
    return this.dirty;
  }

  settled(): void {
    this.dirty = false;
  }

  /** The Cookie header for `url`: only the cookies its domain, path and scheme match. */
  cookieHeader(url: string): string {
    return this.jar.getCookieStringSync(url);
  }

  /** Keeps what a response to `url` set; a malformed or foreign-domain Set-Cookie is ignored, as a browser does. */
  receive(url: string, setCookies: readonly string[]): void {
    let set = false;
    for (const line of setCookies) if (this.jar.setCookieSync(line, url, { ignoreError: true })) set = true;
    if (set) this.took();
  }

  /** A response set something: the jar is dirty, and trimmed to its limits, oldest cookies first. */
  private took(): void {
    this.dirty = true;
    const cookies = this.jar.serializeSync()?.cookies ?? [];
    let bytes = JSON.stringify(cookies).length;
    if (cookies.length <= JAR_LIMITS.maxCookies && bytes <= JAR_LIMITS.maxBytes) return;
    const oldestFirst = [...cookies].sort((a, b) => String(a.creation ?? '').localeCompare(String(b.creation ?? '')));
    let count = cookies.length;
    for (const c of oldestFirst) {
      if (count <= JAR_LIMITS.maxCookies && bytes <= JAR_LIMITS.maxBytes) break;
      this.jar.store.removeCookie(String(c.domain), String(c.path), String(c.key), () => undefined);
      count--;
      bytes -= JSON.stringify(c).length;
    }
  }

  /** Every cookie of the jar, for a browser context (CDP's shape). */
  browserCookies(): BrowserCookie[] {
    return allCookies(this.jar);
  }

  /** Cookies a browser page holds after a render (a browser login), into the jar. */
  receiveBrowserCookies(cookies: readonly BrowserCookie[]): void {
    let took = false;
    for (const c of cookies) {
      const domain = c.domain.replace(/^\./, '');
      const cookie = new Cookie({ key: c.name, value: c.value, domain, path: c.path, secure: c.secure, httpOnly: c.httpOnly, hostOnly: !c.domain.startsWith('.'), ...(c.expires && c.expires > 0 ? { expires: new Date(c.expires * 1000) } : {}) });
      if (this.jar.setCookieSync(cookie, `${c.secure ? 'https' : 'http'}://${domain}${c.path || '/'}`, { ignoreError: true })) took = true;
    }
    if (took) this.took();
  }

  /**
   * The request profile of this session: the job's options (`base`: headers, user agent, locale)
   * with this jar's cookies instead of the spec's fixed ones, and every Set-Cookie kept.
   */
  profile(base: RequestProfile | null): RequestProfile {
    return {
      key: base?.key ?? '',
      userAgent: base?.userAgent ?? null,
      locale: base?.locale ?? null,
      headersFor: (url, startUrl) => {
        const headers = { ...(base?.headersFor(url, startUrl) ?? {}) };
        delete headers.cookie;
        const cookie = this.cookieHeader(url);
        if (cookie) headers.cookie = cookie;
        return headers;
      },
      browserCookies: () => this.browserCookies(),
      receive: (url, setCookies) => this.receive(url, setCookies),
      receiveBrowserCookies: (cookies) => this.receiveBrowserCookies(cookies),
    };
  }
}

function allCookies(jar: CookieJar): BrowserCookie[] {
  const serialized = jar.serializeSync();
  const out: BrowserCookie[] = [];
  for (const raw of serialized?.cookies ?? []) {
    const c = Cookie.fromJSON(raw);
    if (!c || !c.domain) continue;
    out.push({
      name: c.key,
      value: c.value,
      domain: c.hostOnly ? c.domain : `.${c.domain}`,
      path: c.path ?? '/',
      secure: c.secure,
      httpOnly: c.httpOnly,
      ...(c.sameSite && c.sameSite !== 'none' ? { sameSite: c.sameSite === 'strict' ? ('Strict' as const) : ('Lax' as const) } : {}),
      ...(c.expires instanceof Date ? { expires: Math.floor(c.expires.getTime() / 1000) } : {}),
    });
  }
  return out;
}
