/**
 * Sitemaps end to end (issue 23): a frontier and a worker as separate processes on the real stack
 * crawl a generated site whose pages are listed by a sitemap index — a gzip sitemap, a nested index,
 * an index past the nesting limit, a 50,000-URL sitemap, a malformed one, a gzip bomb, entries on
 * another host and at a private address. The crawl requests exactly the start URL and the sitemap
 * URLs the rules allow, each once, to TRAWL_SITEMAP_MAX_URLS; each sitemap document is fetched once
 * (never through the HTTP cache), and none the bounds or the egress rules refuse.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createSitemapSite, type SitemapSite } from '@trawl/demo-site';
import type { CrawlSpec, FetchRequested, JobCompleted, PageFailed, PageFetched } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import { Pipeline } from '../src/pipeline.ts';

const MAX_URLS = 300;
let site: SitemapSite;
let pipeline: Pipeline | undefined;

beforeAll(async () => {
  site = await createSitemapSite({ bigUrls: 50_000 });
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
  site.accessLog.clear();
});

async function dispatch(p: Pipeline, spec: CrawlSpec): Promise<string> {
  const jobId = randomUUID();
  await p.producer.emit(
    'JobDispatched',
    { job_id: jobId, user_id: 'e2e', target_id: null, schedule_id: null, search_url: site.home, start_urls: [site.home], keywords: [], location: null, spec, attempt: 1, params: {} },
    { topic: p.topics.jobs },
  );
  return jobId;
}

async function outcome(p: Pipeline, jobId: string) {
  const events = await readEvents(p.kafka, p.codec, [p.topics.jobs, p.topics.pages, p.topics.fetch]);
  const of = <T>(name: string) => events.filter((e) => e.event.name === name && (e.event.value as { job_id: string }).job_id === jobId).map((e) => e.event.value as T);
  return { requested: of<FetchRequested>('FetchRequested'), fetched: of<PageFetched>('PageFetched'), failed: of<PageFailed>('PageFailed'), completed: of<JobCompleted>('JobCompleted') };
}

describe('a crawl of a site with sitemaps', () => {
  it('`only` requests exactly the start URL and the allowed sitemap URLs, each once, and the bounds hold', async () => {
    pipeline = await Pipeline.start({
      // Egress to the site's port alone: 10.0.0.1 and any other local port are refused.
      env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${site.port}`, TRAWL_SITEMAP_MAX_URLS: String(MAX_URLS), TRAWL_SITEMAP_MAX_BYTES: String(4 * 1024 * 1024), TRAWL_SITEMAP_MAX_DEPTH: '2' },
    });
    pipeline.spawn('frontier');
    pipeline.spawn('worker');
    await pipeline.groupSettled('trawl-worker', 1);
    const excluded = `${site.origin}/p/excluded`;
    const jobId = await dispatch(pipeline, { ...crawlSpec(null, { depth: 3, max_pages: 10_000, sitemap: 'only' }), exclude_patterns: ['/p/excluded$'] });
    await pipeline.waitFor((events) => events.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId), 180_000, `JobCompleted of ${jobId}`);
    const o = await outcome(pipeline, jobId);

    const allowed = site.sameHost.filter((u) => u !== excluded).slice(0, MAX_URLS);
    expect(o.requested.map((r) => r.url).sort()).toEqual([site.home, ...allowed].sort());
    expect(new Set(o.requested.map((r) => r.fetch_id)).size).toBe(1 + MAX_URLS);
    expect(o.failed).toEqual([]);
    expect(new Set(o.completed.map((c) => c.event_id)).size).toBe(1);
    expect(o.completed[0]).toMatchObject({ outcome: 'finished', pages_fetched: 1 + MAX_URLS, pages_failed: 0, urls_seen: 1 + MAX_URLS });
    const root = o.fetched.find((p) => p.url === site.home)!;
    expect(root.sitemap_urls).toEqual(allowed);
    expect(root.sitemap_urls_dropped).toBe(site.sameHost.length - 1 - MAX_URLS);

    // The site's own log: every sitemap document once; nothing off-host, private, past the nesting limit, excluded or linked.
    const log = site.accessLog;
    for (const doc of ['/robots.txt', '/sitemap-index.xml', '/sitemaps/pages.xml.gz', '/sitemaps/nested-index.xml', '/sitemaps/deeper-index.xml', '/sitemaps/big.xml', '/sitemaps/broken.xml', '/sitemaps/bomb.xml.gz', '/sitemaps/missing.xml']) {
      expect(log.count(doc), doc).toBe(1);
    }
    expect(log.count('/sitemaps/too-deep.xml')).toBe(0);
    expect(log.count('/p/excluded')).toBe(0);
    expect(log.count('/about')).toBe(0);
    expect(log.entries().filter((e) => !e.host.startsWith('127.0.0.1'))).toEqual([]);
    expect(log.duplicates()).toEqual(new Map());
  }, 300_000);
});
