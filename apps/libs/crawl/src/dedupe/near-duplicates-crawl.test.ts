/**
 * Near-duplicates end to end without Kafka (decider + fetcher + parser + the worker's index): the
 * hard site's structured feature — three articles, each also as a print view and a session-id
 * mirror — gives one page of its own per content, the rest marked near-duplicates, each article's
 * item once, and the pages only the mirrors link to (expectedStructured).
 */
import type { JobDispatched } from '@trawl/schemas';
import { createHardSite, expectedStructured, STRUCTURED_ENTRY, type HardSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { crawlInMemory } from '../worker/in-memory-crawl.ts';
import { PageProcessor } from '../worker/page-processor.ts';
import { NearDuplicates } from './near-duplicates.ts';

let site: HardSite;
let fetcher: HttpFetcher;

beforeAll(async () => {
  site = await createHardSite();
  fetcher = new HttpFetcher({ policy: new AddressPolicy(parseAllowList(`127.0.0.1:${site.port}`)), totalTimeoutMs: 5_000 });
});
afterAll(async () => {
  await fetcher?.close();
  await site?.close();
});

function dispatch(n: number): JobDispatched {
  const start = `${site.origin}${STRUCTURED_ENTRY}`;
  return {
    event_id: `5d2c3b4e-0000-4000-8000-${String(100 + n).padStart(12, '0')}`,
    occurred_at: new Date('2026-12-02T08:00:00Z'),
    causation_id: null,
    job_id: `5d2c3b4e-0000-4000-8000-${String(n).padStart(12, '0')}`,
    user_id: null,
    target_id: null,
    schedule_id: null,
    search_url: start,
    start_urls: [start],
    keywords: [],
    location: null,
    spec: testSpec({ max_depth: 3, sitemap: 'skip', honour_canonical: true, item_root: 'div.item', item_fields: [{ name: 'title', selector: '.title', attribute: null, xpath: null, transforms: [] }] }),
    attempt: 1,
    params: {},
  };
}

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe('near-duplicates of a crawl (print views, session-id mirrors)', () => {
  it('marks all but one page per content, extracts each item once and follows the near-duplicates\' links', async () => {
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter(), nearDuplicates: new NearDuplicates({ maxDistance: 3 }) });
    const result = await crawlInMemory(dispatch(1), processor, { concurrency: 4 });
    const expected = expectedStructured();
    expect(result.failed).toEqual([]);
    expect(result.fetched.map((f) => pathOf(f.url)).sort()).toEqual(expected.paths);
    expect(result.fetched.filter((f) => f.near_duplicate_of === null).map((f) => pathOf(f.url)).sort()).toEqual(expected.originals);
    expect(result.fetched.filter((f) => f.near_duplicate_of !== null)).toHaveLength(expected.nearDuplicates);
    // A print view or mirror names its article; every page carries a hash.
    for (const f of result.fetched) {
      expect(f.simhash).toMatch(/^[0-9a-f]{16}$/);
      if (f.near_duplicate_of) expect(pathOf(f.near_duplicate_of)).toBe(new URL(f.url).pathname);
    }
    expect(result.items).toBe(expected.titles.length);
    expect(result.completed).toHaveLength(1);
  });

  it('marks none without the index: every variant gives its items again', async () => {
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter() });
    const result = await crawlInMemory(dispatch(2), processor, { concurrency: 4 });
    expect(result.fetched.filter((f) => f.near_duplicate_of !== null)).toEqual([]);
    expect(result.items).toBe(expectedStructured().titles.length * 3);
  });
});
