/**
 * Pages per second of the crawl logic alone (frontier decider + HTTP fetcher + parser, no Kafka)
 * against a generated local site served from the same process. Prints one JSON line.
 *
 *   npm run bench -w @trawl/crawl -- [pages=3000] [concurrency=64]
 */
import { createTestSite } from '@trawl/demo-site';
import { AddressPolicy, crawlInMemory, HostLimiter, HttpFetcher, PageProcessor, parseAllowList, RobotsCache } from '../src/index.ts';
import { testSpec } from '../src/rules/test-spec.ts';

const pages = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 64);
const site = await createTestSite({ pages, linksPerPage: 4, itemsPerPage: 10 });
const fetcher = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')) });
const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({ maxConcurrency: concurrency }) });
const started = performance.now();
const run = await crawlInMemory(
  {
    event_id: '00000000-0000-4000-8000-000000000001',
    occurred_at: new Date(),
    causation_id: null,
    job_id: '00000000-0000-4000-8000-0000000000b1',
    user_id: null,
    target_id: null,
    schedule_id: null,
    search_url: site.home,
    start_urls: [site.home],
    keywords: [],
    location: null,
    attempt: 1,
    params: {},
    spec: testSpec({ max_depth: 50, max_pages: 0, host_concurrency: concurrency, ...site.spec }),
  },
  processor,
  { concurrency },
);
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ bench: 'in-memory-crawl', pages: run.fetched.length, items: run.items, concurrency, seconds: Number(seconds.toFixed(2)), pagesPerSecond: Math.round(run.fetched.length / seconds) }));
await fetcher.close();
await site.close();
