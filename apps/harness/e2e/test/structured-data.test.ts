/**
 * Structured data and near-duplicates end to end through the public API (issue 35, items 4 and 6):
 * the hard site's structured feature — three articles carrying OpenGraph, Twitter card, JSON-LD
 * (one block broken) and microdata, each also served as a print view and a session-id mirror —
 * crawled with a saved website's item selectors and `formats: ["metadata"]`:
 *
 * - one page of its own per content, the print views and mirrors marked near-duplicates (counted in
 *   the job's status, filterable with `?duplicate=`), their links followed, each item extracted once;
 * - the page's structured data served as the `metadata` format, and in `/scrape` and Firecrawl's
 *   `/v1/scrape` answers in their shapes.
 */
import { randomBytes } from 'node:crypto';
import { createHardSite, expectedStructured, STRUCTURED_ENTRY, type HardSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

let site: HardSite;
let pipeline: Pipeline;
let base: string;
let key: string;
const spider = `structured-${randomBytes(3).toString('hex')}`;

let api: Api;
let until: Until;
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

beforeAll(async () => {
  site = await createHardSite();
  ({ pipeline, base, key, api, until } = await startApiPipeline({ env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${site.port}` }, users: ['structured'] }));
  const website = await api('PUT', `/websites/${spider}`, { name: 'Gazette', base_url: `${site.origin}${STRUCTURED_ENTRY}`, item_root: 'div.item', item_fields: [{ name: 'title', selector: '.title' }], max_depth: 3 });
  expect(website.status, JSON.stringify(website.body)).toBe(201);
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
});

describe('structured data and near-duplicates', () => {
  it('a crawl: one page per content, near-duplicates counted and filterable, items once, metadata served as a format', async () => {
    const submitted = await api('POST', '/crawl', { spider, start_urls: [`${site.origin}${STRUCTURED_ENTRY}`], depth: 3, sitemap: 'skip', ignore_cache: true, formats: ['metadata'] });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const jobId = submitted.body.job_id as string;
    const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 60_000, `job ${jobId} over`);
    const expected = expectedStructured();
    expect(status.body).toMatchObject({ status: 'finished', counters: { pages_fetched: expected.paths.length, pages_failed: 0, items_extracted: expected.titles.length, near_duplicates: expected.nearDuplicates } });

    const list = async (query: string) => ((await api('GET', `/jobs/${jobId}/pages?limit=100${query}`)).body.pages as { url: string; fetch_id: string }[]);
    // The archive is linked from the mirrors alone: a near-duplicate's links were followed.
    expect((await list('')).map((p) => pathOf(p.url)).sort()).toEqual(expected.paths);
    const originals = await list('&duplicate=false');
    expect(originals.map((p) => pathOf(p.url)).sort()).toEqual(expected.originals);
    expect(await list('&duplicate=true')).toHaveLength(expected.nearDuplicates);
    const items = (await api('GET', `/jobs/${jobId}/items?limit=100`)).body.items as { fields: { title: string } }[];
    expect(items.map((i) => i.fields.title).sort()).toEqual(expected.titles);

    const article = originals.find((p) => pathOf(p.url) === '/structured/article/1')!;
    const res = await fetch(`${base}/jobs/${jobId}/pages/${article.fetch_id}/content?format=metadata`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const metadata = (await res.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      title: 'The harbour wall is rebuilt',
      language: 'en',
      canonical: `${site.origin}/structured/article/1`,
      open_graph: { 'og:title': 'The harbour wall is rebuilt', 'og:type': 'article', 'article:published_time': '2026-11-02' },
      twitter: { 'twitter:card': 'summary' },
      json_ld: [{ '@type': 'NewsArticle', headline: 'The harbour wall is rebuilt', author: { name: 'Ada Byron' } }],
      json_ld_invalid: 1,
      microdata: [{ type: ['https://schema.org/Article'], properties: { headline: ['The harbour wall is rebuilt'], author: [{ type: ['https://schema.org/Person'], properties: { name: ['Ada Byron'] } }] } }],
    });
    const log = await fetch(`${base}/jobs/${jobId}/logs`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) }).then((r) => r.text());
    expect(log.split('\n').filter((l) => l.includes('near-duplicate of'))).toHaveLength(expected.nearDuplicates);
  }, 90_000);

  it('/scrape and Firecrawl\'s /v1/scrape answer the structured data in their shapes', async () => {
    const url = `${site.origin}/structured/article/2`;
    const scraped = await api('POST', '/scrape', { url, formats: ['markdown'] });
    expect(scraped.status, JSON.stringify(scraped.body)).toBe(200);
    expect(scraped.body.ok, JSON.stringify(scraped.body)).toBe(true);
    expect(scraped.body.metadata).toMatchObject({
      title: 'A recipe for rye sourdough',
      social: { 'og:title': 'A recipe for rye sourdough', 'og:image': `${site.origin}/structured/img/2.jpg` },
      json_ld: [{ '@type': 'NewsArticle' }],
      status_code: 200,
    });
    const firecrawl = await api('POST', '/v1/scrape', { url, formats: ['markdown'] });
    expect(firecrawl.status, JSON.stringify(firecrawl.body)).toBe(200);
    expect((firecrawl.body.data as Record<string, unknown>).metadata).toMatchObject({
      title: 'A recipe for rye sourdough',
      language: 'en',
      ogTitle: 'A recipe for rye sourdough',
      ogUrl: `${site.origin}/structured/article/2`,
      publishedTime: '2026-11-09',
      'twitter:card': 'summary',
      jsonLd: [{ '@type': 'NewsArticle' }],
      sourceURL: url,
      statusCode: 200,
    });
  }, 60_000);
});
