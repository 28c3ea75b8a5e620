import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { BodyTooLargeError, FetcherClosedError, InvalidUrlError, RedirectLoopError, TooManyRedirectsError } from '../errors.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { pinnedConnector } from '../safety/pinned-connector.ts';
import { SafeResolver } from '../safety/safe-resolver.ts';
import { decodeBody } from './charset.ts';
import { isHtmlType, isPdfType, looksLikeHtml, parseContentType } from './content-type.ts';
import { deadline } from './deadline.ts';
import { ACCEPT_ENCODING, decodeContent } from './decompress.ts';
import type { FetchResult } from './fetch-result.ts';
import { mapFetchError } from './map-error.ts';
import { parseRetryAfter } from './retry-after.ts';
import { validatorsOf } from '../cache/validators.ts';
import type { RequestProfile } from '../request/request-profile.ts';
import { defaultUserAgent } from '../request/user-agent.ts';
import { checkProxyAddress, proxyDispatcher, proxyFailure } from '../proxy/proxy-dispatcher.ts';
import type { ProxyEndpoint } from '../proxy/proxy-pool.ts';
import { DnsNotFoundError } from '../errors.ts';

/** `Trawl/<version> (+https://github.com/trawl)`; the worker sends the operator's (userAgentFromEnv: TRAWL_USER_AGENT, TRAWL_CONTACT_URL). */
export const DEFAULT_USER_AGENT = defaultUserAgent();

export interface HttpFetcherOptions {
  readonly userAgent?: string;
  /** Addresses we may connect to; `AddressPolicy.fromEnv()` (TRAWL_FETCH_ALLOW) by default. */
  readonly policy?: AddressPolicy;
  /** Share one resolver (and its DNS cache) between fetchers; built from `policy` when absent. */
  readonly resolver?: SafeResolver;
  readonly connectTimeoutMs?: number;
  /** From request sent to the end of the response headers. */
  readonly headersTimeoutMs?: number;
  /** Longest silence between two body chunks. */
  readonly bodyTimeoutMs?: number;
  /** Whole fetch, redirects included. */
  readonly totalTimeoutMs?: number;
  /** Limit on the decoded body (default 10 MB). */
  readonly maxBodyBytes?: number;
  /** Over the limit: 'refuse' throws BodyTooLargeError (by Content-Length before reading); 'truncate' keeps the first maxBodyBytes and sets `truncated`. */
  readonly oversize?: 'refuse' | 'truncate';
  /** How much of a non-HTML body (PDF, image…) is read before the connection is dropped; reading a small one lets the socket be reused. */
  readonly nonHtmlMaxBytes?: number;
  readonly maxRedirects?: number;
  /** Keep-alive connections per origin. A crawl hits few origins with many requests each. */
  readonly connectionsPerOrigin?: number;
  readonly keepAliveTimeoutMs?: number;
}

export interface FetchOptions {
  /** Aborts the fetch (shutdown, job cancelled): FetchAbortedError. */
  readonly signal?: AbortSignal;
  /**
   * 'html' (default): body only for HTML. 'text': body for any type (robots.txt). 'bytes': the
   * decoded bytes of any type in `data`, not as text (a sitemap, which may be a gzip file).
   */
  readonly accept?: 'html' | 'text' | 'bytes';
  /** Overrides the body limit for this call. */
  readonly maxBodyBytes?: number;
  /** Overrides the oversize policy for this call (robots.txt is truncated, never refused). */
  readonly oversize?: 'refuse' | 'truncate';
  readonly headers?: Readonly<Record<string, string>>;
  /** The job's request options (headers, user agent, locale, cookies), applied to each redirect hop by its URL. */
  readonly request?: RequestProfile | null;
  /**
   * A conditional request (the HTTP cache's revalidation): these headers go only to the hop whose
   * URL is `url` — where the stored page came from — so a 304 always answers for the stored page,
   * even when a redirect now leads somewhere else.
   */
  readonly conditional?: { readonly url: string; readonly headers: Readonly<Record<string, string>> };
  /**
   * A form submission (a login): POST this body, `application/x-www-form-urlencoded`, to the first
   * hop. A 301/302/303 answer turns it into a GET of the new location (what browsers do); a 307/308
   * repeats the POST there.
   */
  readonly form?: string;
  /** Send through this upstream proxy (the job's ProxyPools pick); absent or null: direct. */
  readonly proxy?: ProxyEndpoint | null;
  /**
   * Read a PDF answer's bytes (in `data`) up to `maxBytes` rather than recording it unread: the job
   * asks for its text. A larger one is recorded unread, `truncated` set. Absent: PDFs are not read.
   */
  readonly documents?: { readonly maxBytes: number } | null;
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

/**
 * The HTTP side of a worker: undici with a keep-alive pool per origin, every socket connected to an
 * address the safety policy checked for its host and port (pinnedConnector), manual redirects so
 * that each hop is checked and counted, and bounded reads everywhere (body, decompressed body, time).
 *
 * Any completed HTTP exchange is returned, whatever its status: a 404 or a 503 is a fact about the
 * page, and robots.txt needs to see it. `statusError(result)` turns the error statuses into coded
 * errors for callers that want to throw.
 */
export class HttpFetcher {
  readonly resolver: SafeResolver;
  private readonly agent: Agent;
  private readonly userAgent: string;
  private readonly totalTimeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly oversize: 'refuse' | 'truncate';
  private readonly nonHtmlMaxBytes: number;
  private readonly maxRedirects: number;
  /** One keep-alive dispatcher per upstream proxy (and its credentials), the least recently used closed past 64. */
  private readonly proxied = new Map<string, Dispatcher>();
  private readonly proxyOptions: Parameters<typeof proxyDispatcher>[1];
  private closed = false;

  constructor(options: HttpFetcherOptions = {}) {
    this.resolver = options.resolver ?? new SafeResolver(options.policy ?? AddressPolicy.fromEnv());
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.totalTimeoutMs = options.totalTimeoutMs ?? 30_000;
    this.maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
    this.oversize = options.oversize ?? 'refuse';
    this.nonHtmlMaxBytes = options.nonHtmlMaxBytes ?? 64 * 1024;
    this.maxRedirects = options.maxRedirects ?? 5;
    this.proxyOptions = {
      resolver: this.resolver,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      headersTimeoutMs: options.headersTimeoutMs ?? 15_000,
      bodyTimeoutMs: options.bodyTimeoutMs ?? 15_000,
      connections: options.connectionsPerOrigin ?? 64,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 30_000,
    };
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 64,
      pipelining: 1,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      keepAliveMaxTimeout: 120_000,
      headersTimeout: options.headersTimeoutMs ?? 15_000,
      bodyTimeout: options.bodyTimeoutMs ?? 15_000,
      connect: pinnedConnector(this.resolver, { timeout: options.connectTimeoutMs ?? 10_000 }),
    });
  }

  /** Fetch `url` (normalised), following redirects. Throws a CrawlError subclass; see errors.ts for which are retriable. */
  async fetch(url: string, options: FetchOptions = {}): Promise<FetchResult> {
    if (this.closed) throw new FetcherClosedError('HttpFetcher is closed');
    const started = performance.now();
    const limit = deadline(this.totalTimeoutMs, options.signal);
    const signal = limit.signal;
    const redirects: string[] = [];
    const visited = new Set<string>();
    let current = toHttpUrl(url);
    let form = options.form;
    const proxy = options.proxy ?? null;
    try {
      if (proxy) await checkProxyAddress(proxy, this.resolver);
      const dispatcher = proxy ? this.dispatcherFor(proxy) : this.agent;
      for (;;) {
        visited.add(hopKey(current.href, form));
        if (proxy) await this.checkProxiedTarget(current);
        const res = await dispatcher.request({
          origin: current.origin,
          path: current.pathname + current.search,
          method: form === undefined ? 'GET' : 'POST',
          headers: form === undefined ? this.headers(current.href, url, options) : { ...this.headers(current.href, url, options), 'content-type': 'application/x-www-form-urlencoded' },
          ...(form === undefined ? {} : { body: form }),
          signal,
        });
        // A session's jar takes what every hop sets (a login's redirect sets the session cookie).
        const setCookies = res.headers['set-cookie'];
        const kept = setCookies !== undefined && options.request?.receive !== undefined;
        if (kept) options.request!.receive!(current.href, Array.isArray(setCookies) ? setCookies : [setCookies]);
        if (REDIRECT.has(res.statusCode) && header(res.headers, 'location')) {
          if (res.statusCode !== 307 && res.statusCode !== 308) form = undefined;
          await discard(res.body);
          const next = toHttpUrl(header(res.headers, 'location')!, current);
          redirects.push(current.href);
          // A hop that set a session's cookie may lead back (a cookie wall: set, then the page again); the redirect limit still bounds it.
          if (!kept && visited.has(hopKey(next.href, form))) throw new RedirectLoopError(`redirect loop: ${[...redirects, next.href].join(' → ')}`);
          if (redirects.length > this.maxRedirects) throw new TooManyRedirectsError(`more than ${this.maxRedirects} redirects from ${url}`);
          current = next;
          continue;
        }
        return await this.readResponse(url, current.href, res, redirects, started, options);
      }
    } catch (err) {
      const mapped = mapFetchError(err, url, limit.expired(), options.signal);
      throw proxy ? proxyFailure(mapped, proxy, url) : mapped;
    } finally {
      limit.dispose();
    }
  }

  /**
   * Through a proxy the proxy connects to the target, not this process, so the pinned connector
   * cannot check it: the target's host and port are checked here instead, each hop — an IP literal
   * as such, a name by what it resolves to here. A name that does not resolve here goes on (the
   * proxy may know it: a name of the proxy's own network, the operator's to fence).
   */
  private async checkProxiedTarget(target: URL): Promise<void> {
    try {
      await this.resolver.checkUrl(target);
    } catch (err) {
      if (!(err instanceof DnsNotFoundError)) throw err;
    }
  }

  private dispatcherFor(proxy: ProxyEndpoint): Dispatcher {
    const key = `${proxy.scheme}//${proxy.label}\0${proxy.username ?? ''}\0${proxy.password ?? ''}\0${proxy.operator}`;
    let d = this.proxied.get(key);
    if (d) {
      this.proxied.delete(key);
      this.proxied.set(key, d);
      return d;
    }
    if (this.proxied.size >= 64) {
      const [oldest, dispatcher] = this.proxied.entries().next().value!;
      this.proxied.delete(oldest);
      void dispatcher.close().catch(() => undefined);
    }
    d = proxyDispatcher(proxy, this.proxyOptions);
    this.proxied.set(key, d);
    return d;
  }

  /** Closes the keep-alive pools; in-flight fetches are allowed to finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.agent.close(), ...[...this.proxied.values()].map((d) => d.close())]);
  }

  private async readResponse(
    url: string,
    finalUrl: string,
    res: Dispatcher.ResponseData,
    redirects: string[],
    started: number,
    options: FetchOptions,
  ): Promise<FetchResult> {
    const status = res.statusCode;
    const contentType = header(res.headers, 'content-type');
    const media = parseContentType(contentType);
    const declaredLength = Number(header(res.headers, 'content-length') ?? NaN);
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(header(res.headers, 'retry-after')) : null;
    const wantsText = options.accept === 'text' || options.accept === 'bytes';
    const maybeHtml = media.essence === null || isHtmlType(media.essence);
    const ok = status >= 200 && status < 300;
    const validators = validatorsOf((name) => header(res.headers, name));
    const base = { url, finalUrl, status, contentType, redirects, retryAfterMs, renderMode: 'http' as const, validators };

    // A PDF whose Content-Length is over the limit is recorded unread at once, like any other type.
    if (ok && options.documents && isPdfType(media.essence) && !wantsText && !(declaredLength > options.documents.maxBytes)) {
      const read = await readBounded(res.body, header(res.headers, 'content-encoding'), options.documents.maxBytes);
      // A PDF cut short cannot be read: it is recorded as over the limit, without its bytes.
      const bytes = Number.isFinite(declaredLength) && read.cut ? Math.max(declaredLength, read.decoded) : read.decoded;
      return { ...base, bytes, wireBytes: read.wire, fetchMs: elapsed(started), body: null, ...(read.cut ? {} : { data: read.data }), isHtml: false, truncated: read.cut, charset: null };
    }
    if (!ok || (!maybeHtml && !wantsText)) {
      // Error pages, 304s and non-HTML types are recorded, not parsed: read a little (so a small one
      // keeps the socket reusable), never the whole thing.
      const read = await readBounded(res.body, header(res.headers, 'content-encoding'), this.nonHtmlMaxBytes);
      const bytes = Number.isFinite(declaredLength) && read.cut ? declaredLength : read.decoded;
      return { ...base, bytes, wireBytes: read.wire, fetchMs: elapsed(started), body: null, isHtml: false, truncated: false, charset: null };
    }

    const limit = options.maxBodyBytes ?? this.maxBodyBytes;
    const oversize = options.oversize ?? this.oversize;
    if (oversize === 'refuse' && Number.isFinite(declaredLength) && declaredLength > limit) {
      // Destroying an unread body makes it emit an abort error nobody else listens for.
      res.body.on('error', () => undefined).destroy();
      throw new BodyTooLargeError(`${url}: Content-Length ${declaredLength} is over the ${limit}-byte limit`, limit);
    }
    const read = await readBounded(res.body, header(res.headers, 'content-encoding'), limit);
    if (read.cut && oversize === 'refuse') {
      throw new BodyTooLargeError(`${url}: body is over the ${limit}-byte limit`, limit);
    }
    if (options.accept === 'bytes') {
      return { ...base, bytes: read.decoded, wireBytes: read.wire, fetchMs: elapsed(started), body: null, data: read.data, isHtml: false, truncated: read.cut, charset: null };
    }
    const decoded = decodeBody(read.data, media.charset);
    const isHtml = media.essence !== null ? isHtmlType(media.essence) : looksLikeHtml(decoded.text.slice(0, 512));
    return {
      ...base,
      bytes: read.decoded,
      wireBytes: read.wire,
      fetchMs: elapsed(started),
      body: isHtml || wantsText ? decoded.text : null,
      isHtml,
      truncated: read.cut,
      charset: decoded.charset,
    };
  }

  /** One hop's headers: the defaults, the job's request options for this URL, the caller's own, then the conditional ones (only to the stored page's URL). */
  private headers(hopUrl: string, startUrl: string, options: FetchOptions): Record<string, string> {
    return {
      'user-agent': this.userAgent,
      accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
      'accept-encoding': ACCEPT_ENCODING,
      'accept-language': 'en;q=0.9,*;q=0.5',
      ...options.request?.headersFor(hopUrl, startUrl),
      ...options.headers,
      ...(options.conditional?.url === hopUrl ? options.conditional.headers : {}),
    };
  }
}

/** A hop's identity for loop detection: a form's POST to a URL is not its GET (post, redirect, get). */
function hopKey(href: string, form: string | undefined): string {
  return form === undefined ? href : `POST ${href}`;
}

function toHttpUrl(raw: string, base?: URL): URL {
  let u: URL;
  try {
    u = new URL(raw, base);
  } catch (err) {
    throw new InvalidUrlError(`not a URL: ${raw}`, { cause: err });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidUrlError(`unsupported scheme ${u.protocol} in ${raw}`);
  u.hash = '';
  return u;
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | null {
  const v = headers[name];
  if (v === undefined) return null;
  return Array.isArray(v) ? (v[0] ?? null) : v;
}

interface BoundedRead {
  readonly data: Uint8Array;
  readonly decoded: number;
  readonly wire: number;
  /** The limit was hit and the rest was not read. */
  readonly cut: boolean;
}

/** Reads at most `limit` decoded bytes (the decompressed size is what is bounded: zip bombs), then drops the connection. */
async function readBounded(body: Readable, encoding: string | null, limit: number): Promise<BoundedRead> {
  let wire = 0;
  const stream = decodeContent(body, encoding);
  // Compressed: count the wire bytes on the raw stream (piped, so this listener only observes).
  if (stream !== body) body.on('data', (c: Buffer) => (wire += c.length));
  const chunks: Buffer[] = [];
  let decoded = 0;
  let cut = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const room = limit - decoded;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        decoded = limit;
        cut = true;
        break;
      }
      chunks.push(chunk);
      decoded += chunk.length;
    }
  } finally {
    if (cut || !body.readableEnded) body.destroy();
    if (stream !== body) stream.destroy();
  }
  return { data: Buffer.concat(chunks, decoded), decoded, wire: stream === body ? decoded : wire, cut };
}

async function discard(body: Readable): Promise<void> {
  await readBounded(body, null, 64 * 1024);
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
