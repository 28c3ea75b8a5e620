/**
 * The worker service: consumes trawl.fetch and its retry tiers in the `trawl-worker` group with
 * many fetches in flight per partition (a host's fetches share one partition), and produces
 * PageFetched, ItemExtracted and, for what fails for good, PageFailed + a dead letter.
 *
 * Every page has a budget (page-budget.ts) and the event loop a watchdog (runService): a page
 * that never ends, or blocks the loop, ends as a delivery without an outcome, and after
 * TRAWL_MAX_DELIVERIES as a poison dead letter and the page's PageFailed.
 */
import {
  consumerGroup,
  createKafka,
  EventCodec,
  EventProducer,
  fetchRetryTiers,
  NonRetriableError,
  provisionTopics,
  runEventConsumer,
  TOPICS,
  type Logger,
  type Service,
} from '@trawl/streams';
import { AddressPolicy, containBrowser, HostLimiter, HttpFetcher, lazyBrowserFetcher, PageProcessor, parseLimitsFromEnv, RobotsCache, SafeResolver, type PageFetcher } from '@trawl/crawl';
import { EndedJobs } from './ended-jobs.ts';
import { FetchHandler } from './fetch-handler.ts';
import { budgetedFetcher, pageBudgetMs } from './page-budget.ts';

const int = (name: string, dflt: number) => Number(process.env[name] ?? dflt);

export interface WorkerOptions {
  /** What pages are fetched over HTTP through (default: the HTTP fetcher itself; tests put a misbehaving page in front of it). */
  readonly http?: (fetcher: HttpFetcher) => PageFetcher;
}

export async function startWorker(logger: Logger, options: WorkerOptions = {}): Promise<Service> {
  // Configuration first: a bad TRAWL_FETCH_ALLOW entry stops the worker before it connects anywhere.
  const policy = AddressPolicy.fromEnv();
  const kafka = createKafka({ clientId: 'trawl-worker', logger });
  await provisionTopics(kafka);
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  // Schemas resolved while the registry answers: a registry outage later holds up no first event.
  producer.prepare(['PageFetched', 'PageFailed', 'ItemExtracted']).catch((err: unknown) => logger.warn({ err }, 'schemas not resolved ahead; they will be on first use'));

  const resolver = new SafeResolver(policy);
  const timeoutMs = int('TRAWL_FETCH_TIMEOUT_MS', 30_000);
  const http = new HttpFetcher({
    policy,
    resolver,
    totalTimeoutMs: timeoutMs,
    headersTimeoutMs: Math.min(timeoutMs, 15_000),
    bodyTimeoutMs: Math.min(timeoutMs, 15_000),
    maxBodyBytes: int('TRAWL_FETCH_MAX_BYTES', 10 * 1024 * 1024),
  });
  // Decided at start, so an operator reads at once whether pages will render sandboxed (the
  // `browserSandbox` field is what a health endpoint reports too).
  const containment = await containBrowser();
  const browserSandbox = containment.status;
  if (browserSandbox.state === 'on') logger.info({ browserSandbox }, `Chromium runs as ${browserSandbox.user}, sandboxed`);
  else logger.warn({ browserSandbox }, browserSandbox.reason ?? `Chromium sandbox ${browserSandbox.state}`);
  // Chromium starts on the first page that needs it: most crawls never do.
  const browser = lazyBrowserFetcher({ policy, resolver, containment, concurrency: int('TRAWL_BROWSER_CONCURRENCY', 2) });
  const endedJobs = new EndedJobs();
  await endedJobs.start({ kafka, logger });

  const robots = new RobotsCache(http);
  const limiter = new HostLimiter();
  // A page's budget starts with its fetch (robots.txt and the politeness wait come first, uncharged).
  const parseLimits = parseLimitsFromEnv();
  const processor = new PageProcessor({ http: budgetedFetcher(options.http?.(http) ?? http), browser: budgetedFetcher(browser), robots, limiter, parseLimits });
  const budgetMs = pageBudgetMs();
  logger.info({ pageBudgetMs: budgetMs, parseLimits }, 'page processing');
  const handler = new FetchHandler({ processor, producer, logger, endedJobs, pageBudgetMs: budgetMs });
  const consumer = await runEventConsumer({
    name: 'worker',
    groupId: consumerGroup('trawl-worker'),
    topics: [TOPICS.fetch],
    retryTiers: fetchRetryTiers(),
    deadLetterTopic: TOPICS.fetchDlq,
    concurrency: int('TRAWL_WORKER_CONCURRENCY', 64),
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
    async stop() {
      await consumer.stop();
      await endedJobs.stop();
      await producer.disconnect();
      await http.close();
      await browser.close();
    },
  };
}
