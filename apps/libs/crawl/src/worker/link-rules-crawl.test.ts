/**
 * The link rules end to end without Kafka (decider + fetcher + parser): the hard site's link-rules
 * feature crawled under every combination of scope, follow_nofollow and honour_canonical gives
 * exactly the pages, items and duplicates the feature says (expectedLinkRules).
 */
import type { JobDispatched } from '@trawl/schemas';
import { createHardSite, expectedLinkRules, linkRulesEntry, type HardSite, type LinkRulesOptions } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { crawlInMemory } from './in-memory-crawl.ts';
import { PageProcessor } from './page-processor.ts';

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

function dispatch(n: number, o: LinkRulesOptions): JobDispatched {
  const start = linkRulesEntry(site.port);
  const jobId = `4c1b2a3d-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return {
    event_id: `4c1b2a3d-0000-4000-8000-${String(100 + n).padStart(12, '0')}`,
    occurred_at: new Date('2026-12-02T05:00:00Z'),
    causation_id: null,
    job_id: jobId,
    user_id: null,
    target_id: null,
    schedule_id: null,
    search_url: start,
    start_urls: [start],
    keywords: [],
    location: null,
    spec: testSpec({ ...o, max_depth: 2, sitemap: 'skip', item_root: 'div.item', item_fields: [{ name: 'title', selector: '.title', attribute: null, xpath: null, transforms: [] }] }),
    attempt: 1,
    params: {},
  };
}

const combinations: LinkRulesOptions[] = (['same_host', 'same_domain', 'any'] as const).flatMap((scope) =>
  [false, true].flatMap((follow_nofollow) => [false, true].map((honour_canonical) => ({ scope, follow_nofollow, honour_canonical }))),
);

describe("the hard site's link rules, crawled in memory", () => {
  it.each(combinations.map((o, i) => [JSON.stringify(o), o, i] as const))('%s', async (_name, o, i) => {
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter() });
    const titles: string[] = [];
    const seeing = Object.assign(Object.create(processor) as PageProcessor, {
      process: async (...args: Parameters<PageProcessor['process']>) => {
        const page = await processor.process(...args);
        titles.push(...page.items.map((item) => item.fields.title!));
        return page;
      },
    });
    const result = await crawlInMemory(dispatch(i, o), seeing);
    const expected = expectedLinkRules(site.port, o);
    expect(result.failed.map((f) => `${f.url} ${f.error_code}`)).toEqual([]);
    expect(result.fetched.map((f) => f.url).sort()).toEqual(expected.urls);
    expect(titles.sort()).toEqual(expected.titles);
    expect(result.items).toBe(expected.titles.length);
    expect(result.state.counters.duplicates ?? 0).toBe(expected.duplicates);
    expect(result.fetched.filter((f) => f.canonical_url !== null)).toHaveLength(expected.duplicates);
    expect(result.completed).toHaveLength(1);
  });
});
