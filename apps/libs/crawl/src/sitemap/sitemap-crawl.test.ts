import type { JobDispatched } from '@trawl/schemas';
import { createSitemapSite, type SitemapSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { compileRules } from '../rules/crawl-rules.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { crawlInMemory } from '../worker/in-memory-crawl.ts';
import { PageProcessor } from '../worker/page-processor.ts';
import { SitemapReader } from './sitemap-reader.ts';
import type { SitemapLimits } from './sitemap-limits.ts';

// Only the site's own address and port: 127.0.0.1 on any other port, and 10.0.0.1, are refused.
let policy: AddressPolicy;
const LIMITS: SitemapLimits = { maxUrls: 300, maxBytes: 4 * 1024 * 1024, maxDepth: 2, maxDocuments: 20, timeMs: 30_000 };

function dispatch(jobId: string, startUrls: string[], spec: Partial<JobDispatched['spec']>): JobDispatched {
  return {
    event_id: `${jobId.slice(0, 8)}-0000-4000-8000-000000000001`,
    occurred_at: new Date('2026-11-27T10:00:00Z'),
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

describe('a crawl of a site with sitemaps (decider + fetcher + sitemap reader, no Kafka)', () => {
  let site: SitemapSite;
  let fetcher: HttpFetcher;
  const processor = (limits: SitemapLimits = LIMITS) => {
    const robots = new RobotsCache(fetcher);
    const limiter = new HostLimiter();
    return new PageProcessor({ http: fetcher, robots, limiter, sitemaps: new SitemapReader({ http: fetcher, robots, limiter, limits }) });
  };
  beforeAll(async () => {
    site = await createSitemapSite({ bigUrls: 50_000, bombBytes: 64 * 1024 * 1024 });
    policy = new AddressPolicy(parseAllowList(`127.0.0.1:${site.port}`));
    fetcher = new HttpFetcher({ policy, totalTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    await fetcher.close();
    await site.close();
  });

  it('`only`: exactly the start URL and the allowed sitemap URLs, to the URL limit; indexes, gzip and nesting bounded; no link followed', async () => {
    site.accessLog.clear();
    const excluded = `${site.origin}/p/excluded`;
    const run = await crawlInMemory(dispatch('51111111-2222-4333-8444-555555555555', [site.home], { sitemap: 'only', max_depth: 3, max_pages: 10_000, exclude_patterns: ['/p/excluded$'] }), processor());
    const allowed = site.sameHost.filter((u) => u !== excluded).slice(0, LIMITS.maxUrls);
    expect(run.completed).toHaveLength(1);
    expect(run.requested.map((r) => r.url).sort()).toEqual([site.home, ...allowed].sort());
    expect(run.failed).toEqual([]);
    expect(run.completed[0]).toMatchObject({ outcome: 'finished', pages_fetched: 1 + LIMITS.maxUrls, pages_failed: 0, urls_seen: 1 + LIMITS.maxUrls });
    // Sitemap URLs are depth 1, whatever max_depth; the root carries them, and how many were past the limit.
    const root = run.fetched.find((p) => p.url === site.home)!;
    expect(root.sitemap_urls).toEqual(allowed);
    expect(root.sitemap_urls_dropped).toBe(site.sameHost.length - 1 - LIMITS.maxUrls);
    expect(run.requested.filter((r) => r.url !== site.home).every((r) => r.depth === 1)).toBe(true);

    const paths = site.accessLog.entries().map((e) => `${e.host}${e.path}`);
    const served = (url: string) => paths.filter((p) => `http://${p}` === url).length;
    // Each sitemap document once (no HTTP cache, no retry); the private and off-host ones and the one past the nesting limit never.
    for (const doc of ['/sitemap-index.xml', '/sitemaps/pages.xml.gz', '/sitemaps/nested-index.xml', '/sitemaps/deeper-index.xml', '/sitemaps/big.xml', '/sitemaps/broken.xml', '/sitemaps/bomb.xml.gz', '/sitemaps/missing.xml']) {
      expect(served(`${site.origin}${doc}`), doc).toBe(1);
    }
    for (const url of site.neverFetched) expect(served(url), url).toBe(0);
    for (const url of [...site.offHost, excluded, `${site.origin}/about`]) expect(served(url), url).toBe(0);
    expect(site.accessLog.entries().some((e) => e.host.startsWith('localhost'))).toBe(false);
  }, 60_000);

  it('`include`: the sitemap URLs join the links, deduplicated, within max_pages', async () => {
    const run = await crawlInMemory(dispatch('52111111-2222-4333-8444-555555555555', [site.home], { sitemap: 'include', max_depth: 1, max_pages: 50 }), processor());
    const urls = run.requested.map((r) => r.url);
    expect(run.completed).toHaveLength(1);
    expect(new Set(urls).size).toBe(urls.length);
    expect(urls).toHaveLength(50);
    // The root's link first (as before sitemaps), then the sitemaps' URLs in order, to max_pages.
    expect(urls).toEqual([site.home, `${site.origin}/about`, ...site.sameHost.slice(0, 48)]);
  }, 60_000);

  it('`skip`, a start URL that is not a root, or a site without sitemaps: no sitemap request beyond one /sitemap.xml', async () => {
    const skip = await crawlInMemory(dispatch('53111111-2222-4333-8444-555555555555', [site.home], { sitemap: 'skip', max_depth: 1 }), processor());
    expect(skip.requested.map((r) => r.url)).toEqual([site.home, `${site.origin}/about`]);
    const notRoot = await crawlInMemory(dispatch('54111111-2222-4333-8444-555555555555', [`${site.origin}/about`], { sitemap: 'only' }), processor());
    expect(notRoot.requested.map((r) => r.url)).toEqual([`${site.origin}/about`]);
    expect(notRoot.fetched[0]!.sitemap_urls).toEqual([]);
  }, 60_000);

  it('a sitemap at a private address is refused by the egress rules even when the host rules allow its host', async () => {
    const robots = new RobotsCache(fetcher);
    const reader = new SitemapReader({ http: fetcher, robots, limiter: new HostLimiter(), limits: LIMITS });
    const spec = testSpec({ allowed_hosts: ['10.0.0.1'] });
    const found = await reader.discover(site.home, spec, compileRules(spec), { jobId: 'egress' });
    const privateDoc = found.documents.find((d) => d.url === 'http://10.0.0.1/sitemap.xml');
    expect(privateDoc).toMatchObject({ outcome: 'failed' });
    expect(privateDoc!.reason).toMatch(/^TRAWL_UNSAFE_ADDRESS/);
    // Its URLs pass the host rules now (allowed_hosts), so the private page URL is kept: the worker's fetch refuses it like any page there.
    expect(found.urls).toContain('http://10.0.0.1/p/private');
    const byUrl = new Map(found.documents.map((d) => [d.url, d]));
    expect(byUrl.get(`${site.origin}/sitemaps/broken.xml`)).toMatchObject({ outcome: 'read', locs: 2 });
    expect(byUrl.get(`${site.origin}/sitemaps/broken.xml`)!.reason).toMatch(/malformed XML/);
    expect(byUrl.get(`${site.origin}/sitemaps/bomb.xml.gz`)!.reason).toMatch(/cut at 4194304 bytes/);
    expect(byUrl.get(`${site.origin}/sitemaps/missing.xml`)).toMatchObject({ outcome: 'failed', reason: 'HTTP 404' });
    expect(found.documents.find((d) => d.url === `${site.origin}/sitemaps/deeper-index.xml` && d.outcome === 'skipped')!.reason).toMatch(/nesting limit/);
  }, 60_000);
});
