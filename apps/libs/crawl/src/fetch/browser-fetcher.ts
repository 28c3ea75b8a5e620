import puppeteer, { TimeoutError, type CDPSession, type HTTPRequest, type LaunchOptions, type Page, type PuppeteerLifeCycleEvent } from 'puppeteer-core';
import { existsSync } from 'node:fs';
import { Cluster } from 'puppeteer-cluster';
import { BodyTooLargeError, BrowserError, CrawlError, DnsNotFoundError, FetchAbortedError, FetcherClosedError, FetchTimeoutError, NetworkError, UnsafeAddressError } from '../errors.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { startEgressProxy, type EgressProxy } from '../safety/egress-proxy.ts';
import { SafeResolver } from '../safety/safe-resolver.ts';
import type { BrowserCookie, RequestProfile } from '../request/request-profile.ts';
import { asUserPrefix, browserEnv, containBrowser, createProfileDir, removeProfileDir, type BrowserContainment, type BrowserSandboxStatus } from './browser-containment.ts';
import { isHtmlType, parseContentType } from './content-type.ts';
import type { FetchResult } from './fetch-result.ts';
import { DEFAULT_USER_AGENT } from './http-fetcher.ts';
import { parseRetryAfter } from './retry-after.ts';
import { recyclingPages } from './recycling-pages.ts';
import { renderedHtml } from './rendered-html.ts';
import { startBrowserUpstreams, type BrowserUpstreams, type UpstreamRoute } from '../proxy/browser-upstream.ts';
import { checkProxyAddress, proxyFailure } from '../proxy/proxy-dispatcher.ts';
import type { ProxyEndpoint } from '../proxy/proxy-pool.ts';
import { runBrowserWork } from './browser-actions.ts';
import { DEFAULT_ACTION_LIMITS, type ActionLimits, type BrowserWork, type PageCaptures } from './browser-work.ts';

/**
 * Chromium's flags besides puppeteer's defaults. The last group closes what a page script could use
 * to reach around the egress proxy: WebRTC sends STUN/TURN over UDP straight to any address unless
 * told to use only what can be proxied (seen reaching 127.0.0.1 without these flags); QUIC is UDP
 * too; and with every name mapped to "not found" Chromium cannot resolve or connect by itself at
 * all (the proxy, an IP literal, is exempt), so no feature that skips the proxy finds a host.
 */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-quic',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
];

export interface BrowserFetcherOptions {
  /** Chromium binary; `CHROMIUM_PATH`, else /usr/bin/chromium. */
  readonly executablePath?: string;
  /** Pages rendered at once (one browser, one tab each). */
  readonly concurrency?: number;
  /** A tab is closed and a fresh one opened after this many pages: long-lived tabs leak memory. */
  readonly recycleAfter?: number;
  readonly navigationTimeoutMs?: number;
  /** When a page without `waitForSelector` counts as rendered; network idle (≤ 2 connections for 500 ms) by default. */
  readonly waitUntil?: PuppeteerLifeCycleEvent;
  readonly policy?: AddressPolicy;
  readonly resolver?: SafeResolver;
  /** Which user Chromium runs as and whether its sandbox is on; `containBrowser()` by default. */
  readonly containment?: BrowserContainment;
  readonly userAgent?: string;
  readonly maxBodyBytes?: number;
  readonly oversize?: 'refuse' | 'truncate';
  /** Skip images, fonts and media: rendering for HTML does not need them. */
  readonly blockAssets?: boolean;
  /** Bounds on a render's actions, list expansion and captures (browser-actions.ts; TRAWL_BROWSER_*). */
  readonly actionLimits?: ActionLimits;
  /** Opens the sealed (`tsec1.…`) text of a type action; the worker's, from its secrets key. */
  readonly open?: (sealed: string) => string;
}

export interface BrowserFetchOptions {
  /** Wait for this selector after navigation (items inserted by script). */
  readonly waitForSelector?: string;
  readonly signal?: AbortSignal;
  /** The job's request options: user agent and locale (navigator's too), headers on every request, cookies in a context of the render's own. */
  readonly request?: RequestProfile | null;
  /** Actions, list expansion and captures after navigation (browserWorkOf(spec)). */
  readonly work?: BrowserWork | null;
  /** Render through this upstream proxy (the job's ProxyPools pick), in a browser context of its own; absent or null: the egress proxy alone. */
  readonly proxy?: ProxyEndpoint | null;
}

interface Job {
  readonly url: string;
  readonly waitForSelector: string | undefined;
  readonly request: RequestProfile | null;
  readonly work: BrowserWork | null;
  /** The page's budget: the render's actions stop when it aborts. */
  readonly signal: AbortSignal | undefined;
  /** Where the render's context sends its traffic when it goes through an upstream proxy. */
  readonly route: UpstreamRoute | null;
}

/** Per-tab state of the job the tab is running, read by the request interceptor. */
interface TabContext {
  refused: UnsafeAddressError | null;
  /** The running job's request options and the URL its render started at (Authorization stays on that origin). */
  request: RequestProfile | null;
  startUrl: string;
  /** The tab's own DevTools session, for the user agent and locale overrides, and what they are now. */
  readonly cdp: CDPSession;
  emulated: string;
}

const ASSETS = new Set(['image', 'media', 'font']);

/**
 * Renders pages in headless Chromium (puppeteer-cluster over puppeteer-core and the system Chromium)
 * for websites that need JavaScript, and returns the same FetchResult as HttpFetcher with
 * renderMode 'browser'.
 *
 * Safety, in three layers: the URL is checked before navigation (clean error); request interception
 * refuses any request — navigation, redirect hop, sub-resource — whose host and port are forbidden;
 * and all of the browser's traffic goes through a local egress proxy that resolves and connects with
 * the pinned lookup, so neither DNS rebinding nor WebSockets get around the checks. What could skip
 * the proxy is off (CHROMIUM_ARGS: UDP for WebRTC, QUIC, Chromium's own name resolution), and so
 * are downloads. Chromium itself runs contained: never as root, sandboxed where the kernel allows
 * it, in its own profile and environment (browser-containment.ts).
 */
/** A browser pool's use: renders pending (in a tab or waiting for one), and its tabs at most. */
export interface BrowserUsage {
  readonly pending: number;
  readonly tabs: number;
}

export class BrowserFetcher {
  private closed = false;
  /** The chaining proxy to upstream proxies, started on the first render that has one (proxy/browser-upstream.ts). */
  private upstreams: Promise<BrowserUpstreams> | null = null;
  /** Renders asked for and not yet answered: in a tab, or queued for one. */
  private pending = 0;

  private constructor(
    private readonly cluster: Cluster<Job, FetchResult>,
    private readonly proxy: EgressProxy,
    private readonly resolver: SafeResolver,
    private readonly options: Required<Pick<BrowserFetcherOptions, 'navigationTimeoutMs' | 'waitUntil' | 'maxBodyBytes' | 'oversize' | 'actionLimits'>> & Pick<BrowserFetcherOptions, 'open'>,
    /** Who Chromium runs as and whether its sandbox is on. */
    readonly sandbox: BrowserSandboxStatus,
    /** Chromium's profile directory (owned by its user; removed at close). */
    readonly profileDir: string,
    /** Tabs the pool opens at most (`concurrency`). */
    private readonly tabs: number,
  ) {}

  static async launch(options: BrowserFetcherOptions = {}): Promise<BrowserFetcher> {
    const resolver = options.resolver ?? new SafeResolver(options.policy ?? AddressPolicy.fromEnv());
    const containment = options.containment ?? (await containBrowser());
    if (containment.status.state === 'unavailable') throw new BrowserError(`Chromium is not started: ${containment.status.reason}`);
    const chromium = options.executablePath ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    if (!existsSync(chromium)) throw new BrowserError(`Chromium is not at ${chromium} (CHROMIUM_PATH)`);
    const proxy = await startEgressProxy(resolver);
    const navigationTimeoutMs = options.navigationTimeoutMs ?? 30_000;
    const contexts = new WeakMap<Page, TabContext>();
    const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    const blockAssets = options.blockAssets ?? true;
    const actionLimits = options.actionLimits ?? DEFAULT_ACTION_LIMITS;

    const setupTab = async (page: Page) => {
      const cdp = await page.createCDPSession();
      const ctx: TabContext = { refused: null, request: null, startUrl: '', cdp, emulated: '' };
      contexts.set(page, ctx);
      await emulate(ctx, userAgent, null);
      page.setDefaultNavigationTimeout(navigationTimeoutMs);
      page.setDefaultTimeout(navigationTimeoutMs);
      await page.setRequestInterception(true);
      page.on('request', (req: HTTPRequest) => void screen(req, ctx, resolver, blockAssets));
    };

    const profileDir = createProfileDir(containment);
    const chromiumArgs = [
      ...CHROMIUM_ARGS,
      ...(containment.status.state === 'off' ? ['--no-sandbox'] : []),
      // Route everything, loopback included (Chromium bypasses proxies for loopback unless told not to), through the egress proxy.
      `--proxy-server=${proxy.url}`,
      '--proxy-bypass-list=<-loopback>',
    ];
    const asUser = asUserPrefix(containment);
    const launchOptions: LaunchOptions = {
      // As another user: `setpriv <switches> -- chromium <args>`, which execs Chromium in place
      // (same pid, same pipe). The arguments are puppeteer's own defaults, spelled out.
      executablePath: asUser.length > 0 ? containment.setpriv! : chromium,
      ignoreDefaultArgs: true,
      args: [...asUser, ...(asUser.length > 0 ? [chromium] : []), ...puppeteer.defaultArgs({ headless: true, args: [...chromiumArgs], userDataDir: profileDir })],
      headless: true,
      // DevTools over a pipe rather than a socket: when this process dies, even by SIGKILL, the pipe
      // closes and Chromium exits with it instead of living on as an orphan.
      pipe: true,
      env: browserEnv(profileDir),
      downloadBehavior: { policy: 'deny' },
    };
    let cluster: Cluster<Job, FetchResult>;
    try {
      cluster = await Cluster.launch({
        concurrency: recyclingPages(options.recycleAfter ?? 50, setupTab),
        maxConcurrency: options.concurrency ?? 2,
        puppeteer,
        puppeteerOptions: launchOptions,
        // Navigation, the selector wait, then the actions' own budget.
        timeout: navigationTimeoutMs * 2 + actionLimits.budgetMs + 5_000,
        retryLimit: 0,
        monitor: false,
      });
    } catch (err) {
      await proxy.close();
      removeProfileDir(profileDir);
      throw new BrowserError(`Chromium could not be launched from ${chromium}${asUser.length > 0 ? ` as ${containment.status.user}` : ''}: ${(err as Error).message}`, { cause: err });
    }
    const fetcher = new BrowserFetcher(
      cluster,
      proxy,
      resolver,
      {
        navigationTimeoutMs,
        waitUntil: options.waitUntil ?? 'networkidle2',
        maxBodyBytes: options.maxBodyBytes ?? 10 * 1024 * 1024,
        oversize: options.oversize ?? 'refuse',
        actionLimits,
        ...(options.open ? { open: options.open } : {}),
      },
      containment.status,
      profileDir,
      options.concurrency ?? 2,
    );
    const tabs: Tabs = { setup: setupTab, contextOf: (page) => contexts.get(page)!, userAgent };
    await cluster.task(({ page, data }) => fetcher.renderWithOptions(page, data, tabs));
    return fetcher;
  }

  /** Render `url` (normalised). Throws the same coded errors as HttpFetcher (plus BrowserError). */
  async fetch(url: string, options: BrowserFetchOptions = {}): Promise<FetchResult> {
    this.pending++;
    try {
      return await this.fetchCounted(url, options);
    } finally {
      this.pending--;
    }
  }

  private async fetchCounted(url: string, options: BrowserFetchOptions): Promise<FetchResult> {
    if (this.closed) throw new FetcherClosedError('BrowserFetcher is closed');
    if (options.signal?.aborted) throw new FetchAbortedError(`render of ${url} aborted`);
    await this.resolver.checkUrl(url);
    const proxy = options.proxy ?? null;
    // A tenant's proxy is checked by the egress rules like a target, before anything is sent.
    if (proxy) await checkProxyAddress(proxy, this.resolver);
    const route = proxy ? (await (this.upstreams ??= startBrowserUpstreams(this.resolver))).routeFor(proxy) : null;
    const mapError = (err: unknown) => {
      const mapped = mapBrowserError(err, url);
      // Chromium says when the proxy failed it (no tunnel, no connection): the proxy's fault, counted for benching.
      return proxy && /ERR_(PROXY|TUNNEL|SOCKS)_/.test(mapped.message) ? proxyFailure(mapped, proxy, url) : mapped;
    };
    const job = this.cluster.execute({ url, waitForSelector: options.waitForSelector, request: options.request ?? null, work: options.work ?? null, signal: options.signal, route });
    if (!options.signal) return job.catch((err: unknown) => Promise.reject(mapError(err)));
    // Chromium cannot be interrupted mid-render from here; the caller stops waiting, the tab finishes on its own.
    // The listener goes with the render: the signal may outlive it (WorkBudget.run says why that matters).
    const signal = options.signal;
    return new Promise<FetchResult>((resolve, reject) => {
      const onAbort = () => reject(new FetchAbortedError(`render of ${url} aborted`));
      signal.addEventListener('abort', onAbort, { once: true });
      job.then(resolve, (err: unknown) => reject(mapError(err))).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** The pool's use for metrics: renders pending (in a tab or queued) and tabs at most. */
  usage(): BrowserUsage {
    return { pending: this.pending, tabs: this.tabs };
  }

  /** Waits for running renders, closes Chromium and the proxy. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.cluster.idle();
      await this.cluster.close();
    } finally {
      await this.proxy.close();
      if (this.upstreams) await (await this.upstreams.catch(() => null))?.close();
      removeProfileDir(this.profileDir);
    }
  }

  /**
   * The job's request options on the tab, then the render. User agent and locale are the tab's
   * emulation (so that navigator.userAgent and navigator.language agree with the headers), set
   * again only when they change; headers are added by the request interceptor. Cookies need a
   * context of their own: the tabs share one browser context, and cookies set in it would go to
   * every other job's pages of that site. A render with cookies gets a fresh incognito context and
   * tab, closed with whatever the site set, so nothing is carried to another job (sessions that
   * keep cookies across pages are another step).
   */
  async renderWithOptions(page: Page, job: Job, tabs: Tabs): Promise<FetchResult> {
    const cookies = job.request?.browserCookies() ?? [];
    // A session's render always gets a context of its own: what the site sets goes back to the session's jar, never to the shared context.
    const session = job.request?.receiveBrowserCookies ? job.request : null;
    if (cookies.length === 0 && !job.route && !session) return this.render(page, job, tabs.contextOf(page), tabs.userAgent);
    // Through an upstream proxy: the context's own proxy server (the chain, which checks and
    // forwards), loopback included as with the egress proxy, and the chain's token for that upstream.
    const proxied = job.route ? { proxyServer: job.route.proxyServer, proxyBypassList: ['<-loopback>'] } : {};
    const context = await page.browser().createBrowserContext({ downloadBehavior: { policy: 'deny' }, ...proxied });
    try {
      if (cookies.length > 0) await context.setCookie(...cookies);
      const own = await context.newPage();
      await tabs.setup(own);
      if (job.route) await own.authenticate({ username: job.route.username, password: job.route.password });
      const result = await this.render(own, job, tabs.contextOf(own), tabs.userAgent);
      if (session) session.receiveBrowserCookies!((await context.cookies()).map(browserCookieOf));
      return result;
    } finally {
      await context.close().catch(() => undefined);
    }
  }

  private async render(page: Page, job: Job, ctx: TabContext, defaultUserAgent: string): Promise<FetchResult> {
    ctx.refused = null;
    ctx.request = job.request;
    ctx.startUrl = job.url;
    await emulate(ctx, job.request?.userAgent ?? defaultUserAgent, job.request?.locale ?? null);
    const started = performance.now();
    let response;
    try {
      // With a selector to wait for, the load event is enough; network idle costs at least 500 ms a page.
      const waitUntil = job.waitForSelector ? 'load' : this.options.waitUntil;
      response = await page.goto(job.url, { waitUntil, timeout: this.options.navigationTimeoutMs });
      if (job.waitForSelector) await page.waitForSelector(job.waitForSelector, { timeout: this.options.navigationTimeoutMs });
    } catch (err) {
      if (ctx.refused) throw ctx.refused;
      throw err;
    }
    if (ctx.refused && (!response || response.request().isNavigationRequest())) throw ctx.refused;
    if (!response) throw new NetworkError(`no response rendering ${job.url}`);
    const headers = response.headers();
    const contentType = headers['content-type'] ?? null;
    const media = parseContentType(contentType);
    const status = response.status();
    const isHtml = status >= 200 && status < 300 && (media.essence === null || isHtmlType(media.essence));
    // The spec's actions, list expansion and captures, on a page that rendered; a click that
    // navigates somewhere refused is refused like the first navigation.
    const captures = isHtml && job.work ? await runBrowserWork(page, job.work, { limits: this.options.actionLimits, open: this.options.open, signal: job.signal, maxBytes: this.options.maxBodyBytes }) : undefined;
    if (ctx.refused) throw ctx.refused;
    if (captures) this.checkCaptures(job.url, captures);
    const rendered = isHtml ? await renderedHtml(page, this.options.maxBodyBytes, this.options.oversize === 'truncate') : null;
    let body: string | null = rendered?.html ?? null;
    let bytes = body === null ? Number(headers['content-length'] ?? 0) : Buffer.byteLength(body);
    let truncated = false;
    if (rendered !== null && (rendered.over || bytes > this.options.maxBodyBytes)) {
      if (this.options.oversize === 'refuse') throw new BodyTooLargeError(`${job.url}: rendered HTML is over the ${this.options.maxBodyBytes}-byte limit`, this.options.maxBodyBytes);
      body = Buffer.from(rendered.html).subarray(0, this.options.maxBodyBytes).toString('utf8');
      bytes = this.options.maxBodyBytes;
      truncated = true;
    }
    return {
      url: job.url,
      finalUrl: page.url(),
      status,
      contentType,
      bytes,
      wireBytes: bytes,
      fetchMs: Math.round(performance.now() - started),
      body,
      isHtml,
      truncated,
      redirects: response.request().redirectChain().map((r) => r.url()),
      retryAfterMs: status === 429 || status === 503 ? parseRetryAfter(headers['retry-after']) : null,
      charset: isHtml ? 'utf-8' : null,
      renderMode: 'browser',
      ...(captures && (captures.screenshot || captures.pdf) ? { captures } : {}),
    };
  }

  /**
   * A screenshot or PDF is kept whole or not at all: one over the body limit fails the page. The
   * last resort: captures are bounded as they are made (browser-actions.ts: a clipped screenshot, a
   * PDF's pages and stream), so this catches what those bounds still let grow (a noisy PNG).
   */
  private checkCaptures(url: string, captures: PageCaptures): void {
    for (const [what, bytes] of Object.entries(captures) as [string, Uint8Array][]) {
      if (bytes.byteLength > this.options.maxBodyBytes) throw new BodyTooLargeError(`${url}: its ${what} is over the ${this.options.maxBodyBytes}-byte limit`, this.options.maxBodyBytes);
    }
  }
}

/** How a render's tabs are made and found, for renders that need a context of their own. */
interface Tabs {
  readonly setup: (page: Page) => Promise<void>;
  readonly contextOf: (page: Page) => TabContext;
  readonly userAgent: string;
}

/**
 * User agent and locale as the tab's emulation: Accept-Language and navigator.language(s) from
 * one setting (`fr-CH,fr`; Chromium adds the q-values), Intl's locale from another.
 */
async function emulate(ctx: TabContext, userAgent: string, locale: string | null): Promise<void> {
  const wanted = `${userAgent}\n${locale ?? ''}`;
  if (ctx.emulated === wanted) return;
  const language = locale?.split('-')[0];
  const acceptLanguage = locale ? (language && language !== locale ? `${locale},${language}` : locale) : undefined;
  await ctx.cdp.send('Emulation.setUserAgentOverride', { userAgent, ...(acceptLanguage ? { acceptLanguage } : {}) });
  await ctx.cdp.send('Emulation.setLocaleOverride', locale ? { locale } : {});
  ctx.emulated = wanted;
}

/** Headers the tab's emulation and cookie jar send; the interceptor adds the others. */
const EMULATED = new Set(['user-agent', 'accept-language', 'cookie']);

/** The job's custom headers for one request (navigation, redirect hop or sub-resource), by its URL. */
function extraHeaders(req: HTTPRequest, ctx: TabContext, url: string): Record<string, string> | null {
  if (!ctx.request) return null;
  const extra = Object.entries(ctx.request.headersFor(url, ctx.startUrl)).filter(([name]) => !EMULATED.has(name));
  return extra.length === 0 ? null : { ...req.headers(), ...Object.fromEntries(extra) };
}

/** Request interception: refuse what the policy forbids (recording it when it is the page itself), skip assets, let the rest through. */
async function screen(req: HTTPRequest, ctx: TabContext, resolver: SafeResolver, blockAssets: boolean): Promise<void> {
  if (req.isInterceptResolutionHandled()) return;
  const url = req.url();
  const scheme = url.slice(0, url.indexOf(':'));
  try {
    if (scheme === 'data' || scheme === 'blob' || scheme === 'about') return await req.continue();
    if (scheme !== 'http' && scheme !== 'https') return await req.abort('blockedbyclient');
    if (blockAssets && ASSETS.has(req.resourceType())) return await req.abort('blockedbyclient');
    try {
      await resolver.checkUrl(url);
    } catch (err) {
      if (req.isNavigationRequest() && req.frame() === req.frame()?.page().mainFrame()) {
        ctx.refused = err instanceof UnsafeAddressError ? err : new UnsafeAddressError(`refused ${url}: ${err instanceof Error ? err.message : String(err)}`, new URL(url).hostname, null, { cause: err });
      }
      return await req.abort('blockedbyclient');
    }
    const headers = extraHeaders(req, ctx, url);
    await (headers ? req.continue({ headers }) : req.continue());
  } catch {
    // The page or request went away meanwhile (tab closed, navigation replaced): nothing to answer.
  }
}

function mapBrowserError(err: unknown, url: string): CrawlError {
  if (err instanceof CrawlError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof TimeoutError || /timeout/i.test(message)) return new FetchTimeoutError(`navigation timeout rendering ${url}`, 'navigation', { cause: err });
  if (message.includes('ERR_NAME_NOT_RESOLVED')) return new DnsNotFoundError(`${url}: host does not resolve`, { cause: err });
  if (/net::ERR_/.test(message)) return new NetworkError(`${message.match(/net::ERR_\w+/)?.[0]} rendering ${url}`, { cause: err });
  return new BrowserError(`browser failed rendering ${url}: ${message}`, { cause: err });
}

/** A cookie of a browser context, as the request profile's jar takes it. */
function browserCookieOf(c: { name: string; value: string; domain: string; path: string; secure?: boolean; httpOnly?: boolean; expires?: number; sameSite?: string }): BrowserCookie {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain,
    path: c.path,
    secure: c.secure ?? false,
    httpOnly: c.httpOnly ?? false,
    ...(c.sameSite === 'Strict' || c.sameSite === 'Lax' || c.sameSite === 'None' ? { sameSite: c.sameSite } : {}),
    ...(c.expires !== undefined && c.expires > 0 ? { expires: c.expires } : {}),
  };
}
