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
import { containBrowser, describeExposures, egressPolicyFromEnv, HostLimiter, hostLimiterOptionsFromEnv, HttpFetcher, lazyBrowserFetcher, PageProcessor, parseLimitsFromEnv, RobotsCache, SafeResolver, SitemapReader, sitemapLimitsFromEnv, userAgentFromEnv, type PageFetcher } from '@trawl/crawl';
import { createPool, CRAWL_SPEC_MIGRATIONS, CRAWL_SPECS_OWNER, migrate, quotasFromEnv } from '@trawl/store';
import { ContentStore } from '@trawl/content';
import { EndedJobs } from './ended-jobs.ts';
import { FetchSlots, fetchSlotsOptionsFromEnv } from './fetch-slots.ts';
import { PageContentStore } from './page-content-store.ts';
import { StorageQuota } from './storage-quota.ts';
import { FetchHandler } from './fetch-handler.ts';
import { budgetedFetcher, pageBudgetMs } from './page-budget.ts';
import { SpecCache } from './spec-cache.ts';
import { StoredBodies } from './stored-bodies.ts';
import { httpCacheEnabled } from './http-cache-config.ts';
import { clampedSitemapLimits } from './sitemap-config.ts';
import { ParsePool, parsePoolOptionsFromEnv } from './parse/parse-pool.ts';

const int = (name: string, dflt: number) => Number(process.env[name] ?? dflt);

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
  const politeness = hostLimiterOptionsFromEnv();
  const fetching = fetchSlotsOptionsFromEnv();
  const budgetMs = pageBudgetMs();
  const parsing = parsePoolOptionsFromEnv();
  // A root's sitemaps are read within its page budget: their clock never takes more than half of it,
  // so a slow sitemap cuts the sitemaps short instead of failing the page.
  const sitemapLimits = clampedSitemapLimits(sitemapLimitsFromEnv(), budgetMs);
  const kafka = createKafka({ clientId: 'trawl-worker', logger });
  const codec = new EventCodec();
  const producer = await startServiceProducer({ kafka, logger, codec, emits: ['PageFetched', 'PageFailed', 'ItemExtracted'] });

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
  const browser = lazyBrowserFetcher({ policy, resolver, containment, concurrency: fetching.browserTabs, userAgent: agent.userAgent });
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
  // A page's budget starts with its fetch (robots.txt and the politeness wait come first, uncharged).
  const parseLimits = parseLimitsFromEnv();
  const contentStore = new ContentStore();
  // Pages parse on threads with a time limit each (parse/parse-pool.ts), never on this one.
  const parsePool = parsing.threads > 0 ? new ParsePool(parsing, logger) : undefined;
  // The HTTP cache reads the bodies its entries name from the content store (stored-bodies.ts).
  // Sitemaps go through the same safe fetcher, robots.txt and host limiter as pages, never the cache.
  const processor = new PageProcessor({
    // The wait for a tab comes before the budget's clock, like the wait for a host's politeness.
    http: budgetedFetcher(options.http?.(http) ?? http), browser: slots.tabbed(budgetedFetcher(browser)), robots, limiter, parseLimits,
    ...(parsePool ? { parse: parsePool.parse } : {}),
    ...(httpCache ? { cache: new StoredBodies(contentStore, logger) } : {}),
    sitemaps: new SitemapReader({ http, robots, limiter, limits: sitemapLimits }),
  });
  logger.info({ pageBudgetMs: budgetMs, parseLimits, parsing, politeness, fetching, httpCache, sitemapLimits }, 'page processing');
  // Specs by hash (crawl_specs): FetchRequested names its job's spec rather than copying it.
  const pool = createPool({ applicationName: 'trawl-worker', max: 4 });
  await migrate(pool, CRAWL_SPECS_OWNER, CRAWL_SPEC_MIGRATIONS);
  const specs = new SpecCache(pool, int('TRAWL_WORKER_SPEC_CACHE', 256));
  // Nothing is written for a user past their storage quota (storage-quota.ts): the page goes on without content.
  const quota = new StorageQuota(pool, { defaults: quotasFromEnv(), logger, ttlMs: int('TRAWL_WORKER_STORAGE_QUOTA_TTL_MS', 10_000) });
  const content = new PageContentStore(contentStore, logger, { httpCache, quota });
  content.prepare();
  const handler = new FetchHandler({ processor, producer, logger, endedJobs, pageBudgetMs: budgetMs, specs, content, slots });
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
      await producer.disconnect();
      await http.close();
      await browser.close();
      await parsePool?.close();
      await pool.end();
      content.close();
    },
  };
}
