/**
 * Link rules on the crawl itself, end to end through the public API (issue 33, link rules): the
 * hard site's link-rules feature — nofollow links, a robots-nofollow page, canonical duplicates, a
 * subdomain and another registrable domain, on `*.localhost` names — crawled with a saved website's
 * item selectors and patterns and the crawl's own `scope`, `follow_nofollow` and patterns:
 *
 * - a new crawl follows no nofollow link and honours rel=canonical by default; its own
 *   `exclude_patterns` replace the website's; `scope: same_domain` reaches the subdomain only;
 * - `scope: any` with `follow_nofollow: true` reaches everything, the website's patterns applying;
 * - each item is extracted once, the duplicates counted in the job's status and said in its log;
 * - bad link rules are refused with a code, and no job is made.
 */
import { randomBytes } from 'node:crypto';
import { createHardSite, expectedLinkRules, linkRulesEntry, LINK_RULES_HOSTS, type HardSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

let site: HardSite;
let pipeline: Pipeline;
let base: string;
let key: string;
const spider = `links-${randomBytes(3).toString('hex')}`;

let api: Api;
let until: Until;

interface Crawled {
  readonly status: Record<string, unknown>;
  readonly urls: string[];
  readonly titles: string[];
  readonly log: string[];
}

async function crawl(body: Record<string, unknown>): Promise<Crawled> {
  const submitted = await api('POST', '/crawl', { spider, start_urls: [linkRulesEntry(site.port)], depth: 2, sitemap: 'skip', ignore_cache: true, ...body });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 60_000, `job ${jobId} over`);
  const pages = (await api('GET', `/jobs/${jobId}/pages?limit=100`)).body.pages as { url: string }[];
  const items = (await api('GET', `/jobs/${jobId}/items?limit=100`)).body.items as { fields: { title: string } }[];
  const logs = await fetch(`${base}/jobs/${jobId}/logs`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) }).then((r) => r.text());
  return { status: status.body, urls: pages.map((p) => p.url).sort(), titles: items.map((i) => i.fields.title).sort(), log: logs.split('\n') };
}

beforeAll(async () => {
  site = await createHardSite();
  // One address and port: the three *.localhost names all resolve to it (RFC 6761).
  ({ pipeline, base, key, api, until } = await startApiPipeline({ env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${site.port}` }, users: ['linker'] }));
  // The API learns of a new key by notification: wait until it has.
  await until(() => api('GET', '/jobs?limit=1'), (r) => r.status !== 401, 10_000, 'the new key known to the API');
  const website = await api('PUT', `/websites/${spider}`, {
    name: 'Link rules',
    base_url: linkRulesEntry(site.port),
    item_root: 'div.item',
    item_fields: [{ name: 'title', selector: '.title' }],
    exclude_patterns: ['/links/syndicated'],
    max_depth: 2,
  });
  expect(website.status, JSON.stringify(website.body)).toBe(201);
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
});

const url = (host: keyof typeof LINK_RULES_HOSTS, path: string) => `http://${LINK_RULES_HOSTS[host]}:${site.port}${path}`;

describe('link rules on POST /crawl', () => {
  it('a new crawl: no nofollow link, canonical duplicates counted and extracted once, its own patterns, the registrable domain', async () => {
    const got = await crawl({ scope: 'same_domain', exclude_patterns: ['/links/plain$'] });
    const expected = expectedLinkRules(site.port, { scope: 'same_domain', follow_nofollow: false, honour_canonical: true });
    // The crawl's exclude_patterns replace the website's: the syndicated page is fetched, the plain one not.
    expect(got.urls).toEqual(expected.urls.filter((u) => u !== url('site', '/links/plain')));
    expect(got.urls).toContain(url('site', '/links/syndicated'));
    expect(got.titles).toEqual(expected.titles);
    expect(got.status).toMatchObject({ status: 'finished', counters: { pages_failed: 0, items_extracted: expected.titles.length, duplicates: expected.duplicates } });
    expect(got.log.filter((l) => l.includes('duplicate of'))).toHaveLength(expected.duplicates);
  }, 90_000);

  it('`scope: any` and `follow_nofollow: true`: every host and every link, the website\'s patterns applying', async () => {
    const got = await crawl({ scope: 'any', follow_nofollow: true });
    const expected = expectedLinkRules(site.port, { scope: 'any', follow_nofollow: true, honour_canonical: true });
    expect(got.urls).toEqual(expected.urls.filter((u) => u !== url('site', '/links/syndicated')));
    expect(got.titles).toEqual(expected.titles.filter((t) => t !== 'Syndicated article'));
    expect(got.status).toMatchObject({ status: 'finished', counters: { pages_failed: 0, duplicates: expected.duplicates } });
  }, 90_000);

  it('refuses bad link rules with a code, and makes no job', async () => {
    const before = ((await api('GET', '/jobs?limit=100')).body.jobs as unknown[]).length;
    const bad: [Record<string, unknown>, string, string][] = [
      [{ include_patterns: ['/jobs(?!/open)'] }, 'UNSUPPORTED_PATTERN', 'include_patterns.0'],
      [{ exclude_patterns: ['ok', '(unclosed'] }, 'VALIDATION_FAILED', 'exclude_patterns.1'],
      [{ scope: 'planet' }, 'VALIDATION_FAILED', 'scope'],
      [{ follow_nofollow: 'yes' }, 'VALIDATION_FAILED', 'follow_nofollow'],
    ];
    for (const [body, code, field] of bad) {
      const answer = await api('POST', '/crawl', { spider, start_urls: [linkRulesEntry(site.port)], depth: 1, ...body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error, JSON.stringify(body)).toMatchObject({ code, field });
    }
    expect(((await api('GET', '/jobs?limit=100')).body.jobs as unknown[]).length).toBe(before);
  });
});
