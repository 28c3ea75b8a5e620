/**
 * The worker service: consumes trawl.fetch and its retry tiers in the `trawl-worker` group with
 * many fetches in flight per partition (a host's fetches share one partition), and produces
 * PageFetched, ItemExtracted and, for what fails for good, PageFailed + a dead letter. Jobs that ask
 * for formats have their pages kept in the content store (TRAWL_S3_URL, TRAWL_S3_BUCKET).
 *
 * Every page has a budget (page-budget.ts) and parses on a thread with a time limit of its own
 * (parse/parse-pool.ts): a parse past it fails its page (TRAWL_PARSE_TIMEOUT) while the worker
 * serves every other page. The event loop has a watchdog as a last resort (runService): a page
 * that never ends, or blocks the loop, ends as a delivery without an outcome, and after
 * TRAWL_MAX_DELIVERIES as a poison dead letter and the page's PageFailed.
 */
import {
  consumerGroup,
  createKafka,
  defaultMetrics,
  liveGaugeIn,
  EventCodec,
  fetchRetryTiers,
  NonRetriableError,
  startServiceProducer,
  runEventConsumer,
  joinedCheck,
  kafkaCheck,
  stackListeners,
  TOPICS,
  type Logger,
  type Service,
} from '@trawl/streams';
import { actionLimitsFromEnv, AutoThrottle, autoThrottleOptionsFromEnv, ThrottleReports, BlockClassifier, blockClassifierOptionsFromEnv, containBrowser, describeExposures, egressPolicyFromEnv, HostLimiter, hostLimiterOptionsFromEnv, HttpFetcher, lazyBrowserFetcher, PageProcessor, parseLimitsFromEnv, RobotsCache, SafeResolver, SitemapReader, sitemapLimitsFromEnv, userAgentFromEnv, type PageFetcher } from '@trawl/crawl';
import { createPool, CRAWL_SPEC_MIGRATIONS, CRAWL_SPECS_OWNER, migrate, quotasFromEnv } from '@trawl/store';
import { ContentStore } from '@trawl/content';
import { secretBoxFromEnv } from '@trawl/store/secrets';
import { credentialOpener } from './credential-opener.ts';
import { EndedJobs } from './ended-jobs.ts';
import { FetchSlots, fetchSlotsOptionsFromEnv } from './fetch-slots.ts';
import { PageContentStore } from './page-content-store.ts';
import { StorageQuota } from './storage-quota.ts';
import { FetchHandler } from './fetch-handler.ts';
import { registerThrottleGauges } from './throttle-metrics.ts';
import { budgetedFetcher, pageBudgetMs } from './page-budget.ts';
import { SpecCache } from './spec-cache.ts';
import { browserLogin, SessionPool } from '@trawl/crawl';
import { MAX_PAGE_NOTES, ProxyPools, proxyPoolsOptionsFromEnv } from '@trawl/crawl';
import { NearDuplicates, nearDuplicateDistanceFromEnv } from '@trawl/crawl';
import { documentLimitsFromEnv, RulesCache } from '@trawl/crawl';
import { proxyObserver } from './proxy-metrics.ts';
import { SessionLog } from './session-log.ts';
import { sessionEvents } from './session-events.ts';
import { StoredBodies } from './stored-bodies.ts';
import { httpCacheEnabled } from './http-cache-config.ts';
import { clampedSitemapLimits } from './sitemap-config.ts';
import { ParsePool, parsePoolOptionsFromEnv } from './parse/parse-pool.ts';
import { parseWork } from './parse/parse-work.ts';
import { PageDownloads } from './page-downloads.ts';

const int = (name: string, dflt: number) => Number(process.env[name] ?? dflt);

/** A page carries at most MAX_PAGE_NOTES notes (PageFetched.notes): the proxies' first, the sessions' in the room left (the rest on a later page). */
function withSessionNotes(proxyNotes: readonly string[], take: (max: number) => string[]): readonly string[] {
  const room = MAX_PAGE_NOTES - proxyNotes.length;
  return room > 0 ? [...proxyNotes, ...take(room)] : proxyNotes;
}

export interface WorkerOptions {
  /** What pages are fetched over HTTP through (default: the HTTP fetcher itself; tests put a misbehaving page in front of it). */
  readonly http?: (fetcher: HttpFetcher) => PageFetcher;
}

export async function startWorker(logger: Logger, options: WorkerOptions = {}): Promise<Service> {
  // Configuration first: a bad TRAWL_FETCH_ALLOW entry, or one that opens the stack's own ports to
  // tenants (unless TRAWL_FETCH_ALLOW_STACK=1), stops the worker before it connects anywhere.
  const { policy, exposures } = await egressPolicyFromEnv(stackListeners());
  if (exposures.length > 0) logger.warn({ exposures: describeExposures(exposures) }, 'TRAWL_FETCH_ALLOW opens ports of the stack to crawls (TRAWL_FETCH_ALLOW_STACK=1)');
  const httpCache = httpCacheEnabled();
  // Jobs' credentials (headers, cookies, proxy credentials, login fields, typed text) arrive sealed:
  // no key, no start (TRAWL_SECRETS_KEY, the API's and the dispatcher's; README: Secrets).
  const secretBox = secretBoxFromEnv(process.env, 'the worker');
  const credentials = credentialOpener(secretBox);
  const politeness = hostLimiterOptionsFromEnv();
  // The operator's default proxy and the benching rule (TRAWL_PROXY_URL, TRAWL_PROXY_BENCH_AFTER, TRAWL_PROXY_BENCH_MS); a bad URL stops the start.
  const proxySettings = proxyPoolsOptionsFromEnv();
  const fetching = fetchSlotsOptionsFromEnv();
  const budgetMs = pageBudgetMs();
  const parsing = parsePoolOptionsFromEnv();
  // A root's sitemaps are read within its page budget: their clock never takes more than half of it,
  // so a slow sitemap cuts the sitemaps short instead of failing the page.
  const sitemapLimits = clampedSitemapLimits(sitemapLimitsFromEnv(), budgetMs);
  const kafka = createKafka({ clientId: 'trawl-worker', logger });
  const codec = new EventCodec();
  const producer = await startServiceProducer({ kafka, logger, codec, emits: ['PageFetched', 'PageFailed', 'ItemExtracted', 'SessionUpdated'] });

  const resolver = new SafeResolver(policy);
  const timeoutMs = int('TRAWL_FETCH_TIMEOUT_MS', 30_000);
  // The operator's user agent (TRAWL_USER_AGENT, TRAWL_CONTACT_URL) for every request a crawl does not give its own; robots.txt is read for its product token.
  const agent = userAgentFromEnv();
  const http = new HttpFetcher({
    userAgent: agent.userAgent,
    policy,
    resolver,
    totalTimeoutMs: timeoutMs,
    headersTimeoutMs: Math.min(timeoutMs, 15_000),
    bodyTimeoutMs: Math.min(timeoutMs, 15_000),
    maxBodyBytes: int('TRAWL_FETCH_MAX_BYTES', 10 * 1024 * 1024),
  });
  // Decided at start, so an operator reads at once whether pages will render sandboxed: logged
  // here and shown by `/readyz` (`facts.browserSandbox`).
  const containment = await containBrowser();
  const browserSandbox = containment.status;
  if (browserSandbox.state === 'on') logger.info({ browserSandbox }, `Chromium runs as ${browserSandbox.user}, sandboxed`);
  else logger.warn({ browserSandbox }, browserSandbox.reason ?? `Chromium sandbox ${browserSandbox.state}`);
  // Chromium starts on the first page that needs it: most crawls never do.
  const browser = lazyBrowserFetcher({ policy, resolver, containment, concurrency: fetching.browserTabs, userAgent: agent.userAgent, open: credentials.open, actionLimits: actionLimitsFromEnv() });
  // Fetch slots and browser tabs go round the jobs waiting for them (fetch-slots.ts).
  const slots = new FetchSlots(fetching);
  liveGaugeIn(defaultMetrics, 'trawl_worker_fetch_slots', 'Fetches holding a slot (fetching) or waiting for their turn (waiting); browser renders in a tab (rendering) or waiting for one (waiting_for_tab).', ['state']).add(() => {
    const use = slots.usage();
    return [[{ state: 'fetching' }, use.fetching], [{ state: 'waiting' }, use.waiting], [{ state: 'rendering' }, use.rendering], [{ state: 'waiting_for_tab' }, use.waitingForTab]];
  });
  // The browser pool's use, read at scrape time: renders waiting beyond its tabs mean pages queue for Chromium.
  liveGaugeIn(defaultMetrics, 'trawl_browser_renders_pending', 'Browser renders asked for and not answered (in a tab or queued for one).', []).add(() => [[{}, browser.usage().pending]]);
  liveGaugeIn(defaultMetrics, 'trawl_browser_tabs', 'Tabs the browser pool opens at most; 0 until Chromium is started.', []).add(() => {
    const use = browser.usage();
    return [[{}, use.started ? use.tabs : 0]];
  });
  const endedJobs = new EndedJobs();
  await endedJobs.start({ kafka, logger });

  const robots = new RobotsCache(http, { productToken: agent.productToken });
  // A job's host_concurrency / host_delay_ms bind its own fetches; robots.txt, 429s and the operator's caps everyone's.
  const limiter = new HostLimiter(politeness);
  // Block pages are never stored (blocks/block-classifier.ts); adaptive_throttle jobs have their delay and concurrency chosen per host (auto-throttle.ts).
  const blocks = new BlockClassifier(blockClassifierOptionsFromEnv());
  const throttle = new AutoThrottle(autoThrottleOptionsFromEnv());
  registerThrottleGauges(defaultMetrics, throttle);
  // What it chose is told to the job too (PageFetched.throttle), when it moved enough to be news (throttle-reports.ts).
  const throttleReports = new ThrottleReports();
  // A page's budget starts with its fetch (robots.txt and the politeness wait come first, uncharged).
  const contentStore = new ContentStore();
  // Pages parse on threads with a time limit each (parse/parse-pool.ts), never on this one.
  const parsePool = parsing.threads > 0 ? new ParsePool(parsing, logger, defaultMetrics, (signal) => slots.turnOf(signal)) : undefined;
  const inlineRules = new RulesCache(256);
  // PDFs read for their text, and the ceiling of jobs' downloads (TRAWL_PDF_MAX_BYTES, TRAWL_PDF_MAX_PAGES, TRAWL_DOWNLOADS_MAX_BYTES).
  const documents = documentLimitsFromEnv();
  // The HTTP cache reads the bodies its entries name from the content store (stored-bodies.ts).
  // Sitemaps go through the same safe fetcher, robots.txt and host limiter as pages, never the cache.
  // Jobs' sessions (CrawlSpec.sessions, login) live on trawl.sessions, jars sealed (session-log.ts).
  const sessionLog = new SessionLog({ kafka, codec, logger, producer, box: () => secretBox, catchUpMs: int('TRAWL_SESSION_CATCH_UP_MS', 15_000) });
  await sessionLog.start();
  // Login fields arrive sealed; they are opened only where the login sends them (form-login.ts).
  const sessionNotes = sessionEvents(logger);
  const sessions = new SessionPool({ store: sessionLog, http, browser: browserLogin(slots.tabbed(browser)), open: (value) => credentials.open(value), onEvent: sessionNotes.onEvent });
  // Jobs' proxies (CrawlSpec.proxies, else TRAWL_PROXY_URL); their credentials open here, in memory.
  const proxies = new ProxyPools({ ...proxySettings, open: (v) => credentials.open(v), observer: proxyObserver(defaultMetrics, logger) });
  const nearDuplicateDistance = nearDuplicateDistanceFromEnv();
  const parseLimits = { ...parseLimitsFromEnv(), similarity: nearDuplicateDistance >= 0 };
  const nearDuplicates = new NearDuplicates({ maxDistance: nearDuplicateDistance });
  const processor = new PageProcessor({
    // The wait for a tab comes before the budget's clock, like the wait for a host's politeness.
    http: budgetedFetcher(options.http?.(http) ?? http), browser: slots.tabbed(budgetedFetcher(browser)), robots, limiter, parseLimits,
    // Without threads, pages are parsed (and their formats derived) on this thread, unbounded: for measurements.
    parse: parsePool ? parsePool.parse : (job) => parseWork(job, inlineRules),
    documents,
    ...(httpCache ? { cache: new StoredBodies(contentStore, logger) } : {}),
    // A re-extraction reads its source job's bodies from the content store whatever TRAWL_HTTP_CACHE says.
    stored: new StoredBodies(contentStore, logger, defaultMetrics, { strict: true }),
    sitemaps: new SitemapReader({ http, robots, limiter, limits: sitemapLimits }),
    blocks,
    throttle,
    credentials,
    sessions,
    proxies,
    // Near-duplicates per job and host, where that host's fetches are consumed (dedupe/near-duplicates.ts).
    nearDuplicates,
  });
  logger.info({ pageBudgetMs: budgetMs, nearDuplicateDistance: nearDuplicates.enabled ? nearDuplicateDistance : 'off', parseLimits, parsing, politeness, fetching, httpCache, sitemapLimits, proxy: { operatorDefault: proxySettings.defaultProxy ? parseProxyUrlLabel(proxySettings.defaultProxy) : null, benchAfter: proxySettings.benchAfter, benchMs: proxySettings.benchMs } }, 'page processing');
  // Specs by hash (crawl_specs): FetchRequested names its job's spec rather than copying it.
  const pool = createPool({ applicationName: 'trawl-worker', max: 4 });
  await migrate(pool, CRAWL_SPECS_OWNER, CRAWL_SPEC_MIGRATIONS);
  const specs = new SpecCache(pool, int('TRAWL_WORKER_SPEC_CACHE', 256));
  // Nothing is written for a user past their storage quota (storage-quota.ts): the page goes on without content.
  const quota = new StorageQuota(pool, { defaults: quotasFromEnv(), logger, ttlMs: int('TRAWL_WORKER_STORAGE_QUOTA_TTL_MS', 10_000) });
  const content = new PageContentStore(contentStore, logger, { httpCache, quota });
  content.prepare();
  const handler = new FetchHandler({ processor, producer, logger, endedJobs, pageBudgetMs: budgetMs, specs, content, slots, notes: (jobId) => withSessionNotes(proxies.takeNotes(jobId), (max) => sessionNotes.takeNotes(jobId, max)), throttle: (jobId, host) => throttleReports.take(throttle.choice(host, jobId)), downloads: new PageDownloads(processor, content, logger) });
  const consumer = await runEventConsumer({
    name: 'worker',
    groupId: consumerGroup('trawl-worker'),
    topics: [TOPICS.fetch],
    retryTiers: fetchRetryTiers(),
    deadLetterTopic: TOPICS.fetchDlq,
    // Every accepted fetch is handed over at once, to wait its job's turn for a slot (fetch-slots.ts).
    ...slots.consumerLimits(),
    kafka,
    logger,
    codec,
    producer,
    handler: (event) => {
      if (event.name !== 'FetchRequested') throw new NonRetriableError(`trawl.fetch carries FetchRequested, not ${event.name}`);
      return handler.handle(event);
    },
    onDeadLetter: (dead) => handler.onDeadLetter(dead),
  });

  return {
    readiness: { consumer: joinedCheck(consumer.ready), kafka: kafkaCheck(kafka) },
    facts: { browserSandbox },
    async stop() {
      await consumer.stop();
      await endedJobs.stop();
      await sessionLog.stop();
      await producer.disconnect();
      await http.close();
      await browser.close();
      await parsePool?.close();
      await pool.end();
      content.close();
    },
  };
}

/** The operator's proxy as `scheme://host:port`, for the start-up log: never its credentials. */
function parseProxyUrlLabel(raw: string): string {
  const u = new URL(raw);
  return `${u.protocol}//${u.host}`;
}
