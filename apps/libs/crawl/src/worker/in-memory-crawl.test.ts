import type { JobDispatched } from '@trawl/schemas';
import { createJobBoard, createTestSite, JOB_BOARD_SPEC, serve, type RunningServer, type TestSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { parsePage } from '../parse/parse-page.ts';
import { crawlInMemory } from './in-memory-crawl.ts';
import { PageProcessor } from './page-processor.ts';

const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));

function dispatch(jobId: string, startUrls: string[], spec: Partial<JobDispatched['spec']>): JobDispatched {
  return {
    event_id: `${jobId.slice(0, 8)}-0000-4000-8000-000000000001`,
    occurred_at: new Date('2026-11-21T10:00:00Z'),
    causation_id: null,
    job_id: jobId,
    user_id: null,
    target_id: null,
    schedule_id: null,
    search_url: startUrls[0]!,
    start_urls: startUrls,
    keywords: [],
    location: null,
    spec: testSpec(spec),
    attempt: 1,
    params: {},
  };
}

function processor(fetcher: HttpFetcher): PageProcessor {
  return new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({ baseBackoffMs: 50, maxBackoffMs: 300 }) });
}

describe('a crawl of the generated test site (decider + fetcher + parser, no Kafka)', () => {
  let site: TestSite;
  let fetcher: HttpFetcher;
  beforeAll(async () => {
    // Normal pages answer in milliseconds, yet the access log below allows no retry of them: the
    // deadline is far above any stall of a busy machine, and the slow page far above the deadline.
    const totalTimeoutMs = 5_000;
    site = await createTestSite({ pages: 40, linksPerPage: 3, traps: true, slowMs: 4 * totalTimeoutMs });
    fetcher = new HttpFetcher({ policy, totalTimeoutMs });
  });
  afterAll(async () => {
    await fetcher.close();
    await site.close();
  });

  it('requests exactly the expected URL set, each once, handles every trap, and completes once', async () => {
    const maxDepth = 2;
    const expected = site.expected(maxDepth);
    const run = await crawlInMemory(dispatch('11111111-2222-4333-8444-555555555555', [site.home], { max_depth: maxDepth, max_pages: 1000, ...site.spec }), processor(fetcher));

    expect(run.completed).toHaveLength(1);
    expect(run.requested.map((r) => r.url).sort()).toEqual(expected.requested);
    expect(run.fetched.map((p) => p.url).sort()).toEqual(expected.fetched);
    expect(run.failed.map((p) => p.url).sort()).toEqual(expected.failed);
    expect(run.completed[0]).toMatchObject({ outcome: 'finished', pages_fetched: expected.fetched.length, pages_failed: expected.failed.length, items_extracted: expected.items });
    expect(run.items).toBe(expected.items);

    const failure = (url: string) => run.failed.find((f) => f.url === url);
    expect(failure(site.traps.redirectLoop)?.error_code).toBe('TRAWL_REDIRECT_LOOP');
    expect(failure(site.traps.always503)).toMatchObject({ error_code: 'TRAWL_HTTP_STATUS', status: 503, attempts: 3 });
    expect(failure(site.traps.slow)).toMatchObject({ error_code: 'TRAWL_TIMEOUT', attempts: 3 });
    expect(failure(site.traps.huge)).toMatchObject({ error_code: 'TRAWL_BODY_TOO_LARGE', attempts: 1 });
    expect(failure(site.traps.robotsDisallowed)?.error_code).toBe('TRAWL_ROBOTS_DISALLOWED');
    const page = (url: string) => run.fetched.find((f) => f.url === url);
    expect(page(site.traps.pdf)).toMatchObject({ parsed: false, content_type: 'application/pdf' });
    expect(page(site.traps.redirectChain)).toMatchObject({ final_url: `${site.origin}/trap/landing` });
    expect(page(site.traps.flaky)).toMatchObject({ attempt: 3 });

    // The server's own log: each page once (retries aside), nothing forbidden, nothing off-host.
    const log = site.accessLog;
    for (const url of expected.parsed) {
      const path = url.slice(site.origin.length);
      expect(log.count(path), path).toBe(path === '/trap/flaky' ? 3 : 1);
    }
    for (const url of expected.neverServed) expect(log.count(url.slice(url.indexOf('/', 8))), url).toBe(0);
    expect(log.entries().filter((e) => e.host.startsWith('localhost'))).toEqual([]);
    expect(log.count('/robots.txt')).toBe(1);
    const retried = new Set(['/trap/flaky', '/trap/always-503', '/trap/slow']);
    for (const [path, n] of log.duplicates()) expect(retried.has(path), `${path} requested ${n} times`).toBe(true);
  }, 60_000);

  it('parses through the `parse` step when one is given (the worker hands it to threads), with the same outcome', async () => {
    site.reset();
    const maxDepth = 1;
    const expected = site.expected(maxDepth);
    const parsedUrls: string[] = [];
    const viaStep = new PageProcessor({
      http: fetcher,
      robots: new RobotsCache(fetcher),
      limiter: new HostLimiter({ baseBackoffMs: 50, maxBackoffMs: 300 }),
      parse: async (job) => {
        parsedUrls.push(job.url);
        expect(job.jobId).toBe('21111111-2222-4333-8444-555555555555');
        return parsePage({ html: job.html, url: job.url, finalUrl: job.finalUrl, spec: job.spec, limits: job.limits });
      },
    });
    const run = await crawlInMemory(dispatch('21111111-2222-4333-8444-555555555555', [site.home], { max_depth: maxDepth, max_pages: 1000, ...site.spec }), viaStep);
    expect(run.fetched.map((p) => p.url).sort()).toEqual(expected.fetched);
    expect(parsedUrls.sort()).toEqual(expected.parsed);
    expect(run.items).toBe(expected.items);
  }, 60_000);

  it('refuses a body over the size limit before parsing it', async () => {
    const parsedUrls: string[] = [];
    const viaStep = new PageProcessor({
      http: fetcher,
      robots: new RobotsCache(fetcher),
      limiter: new HostLimiter(),
      parse: async (job) => {
        parsedUrls.push(job.url);
        return parsePage({ html: job.html, url: job.url, finalUrl: job.finalUrl, spec: job.spec, limits: job.limits });
      },
    });
    const run = await crawlInMemory(dispatch('31111111-2222-4333-8444-555555555555', [site.traps.huge], { max_depth: 0, ...site.spec }), viaStep);
    expect(run.failed).toMatchObject([{ url: site.traps.huge, error_code: 'TRAWL_BODY_TOO_LARGE', attempts: 1 }]);
    expect(parsedUrls).toEqual([]);
  }, 60_000);
});

describe('a crawl of the demo job board', () => {
  let server: RunningServer;
  let fetcher: HttpFetcher;
  beforeAll(async () => {
    server = await serve(createJobBoard({ listings: 100 }));
    fetcher = new HttpFetcher({ policy });
  });
  afterAll(async () => {
    await fetcher.close();
    await server.close();
  });

  it('follows the listing pages at the same depth and the details one hop down', async () => {
    const run = await crawlInMemory(dispatch('99999999-2222-4333-8444-555555555555', [`${server.origin}/jobs`], { ...JOB_BOARD_SPEC, max_depth: 1 }), processor(fetcher));
    const urls = run.requested.map((r) => r.url.slice(server.origin.length));
    expect(urls.filter((u) => u.startsWith('/jobs?page=') || u === '/jobs')).toHaveLength(10);
    expect(urls.filter((u) => /^\/jobs\/\d+$/.test(u))).toHaveLength(100);
    expect(urls).toHaveLength(110);
    expect(run.requested.filter((r) => r.url.includes('page=')).every((r) => r.depth === 0)).toBe(true);
    expect(run.items).toBe(100);
    expect(run.completed).toHaveLength(1);
    expect(server.accessLog.duplicates().size).toBe(0);
  }, 30_000);
});
