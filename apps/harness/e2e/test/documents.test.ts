/**
 * Main content, PDFs and downloads end to end through the public API (issue 35, item 5): the API,
 * a frontier, a worker and the Postgres projector as processes on the real stack, against the hard
 * site's documents feature — an article wrapped in navigation, a cookie banner, a sidebar and a
 * footer, a PDF report of known text, one image under two names.
 *
 * - `/scrape` of the article keeps its boilerplate by default and drops it with `only_main_content`;
 *   Firecrawl's `/v1/scrape` drops it unless `onlyMainContent: false` (its default);
 * - `/scrape` of the PDF answers its text as `markdown` and `text`;
 * - a crawl with `downloads` lists the article's linked files on its page, the two copies of the
 *   image under one sha-256, served back by the downloads endpoint; the PDF it links is a page of
 *   the crawl whose Markdown is the report's text.
 */
import { createHardSite, expectedDocuments, type HardSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

let site: HardSite;
let pipeline: Pipeline;
let base: string;
let key: string;

let api: Api;
let until: Until;
const article = () => `${site.origin}${expectedDocuments.entry}`;

beforeAll(async () => {
  site = await createHardSite();
  ({ pipeline, base, key, api, until } = await startApiPipeline({ env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${site.port}` }, users: ['documents'] }));
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
});

describe('main content, PDFs and downloads', () => {
  it('scrapes the whole page by default and its main content alone with only_main_content; Firecrawl\'s route defaults to the main content', async () => {
    const whole = await api('POST', '/scrape', { url: article(), formats: ['markdown', 'text'] });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    const main = await api('POST', '/scrape', { url: article(), formats: ['markdown', 'text'], only_main_content: true });
    expect(main.status, JSON.stringify(main.body)).toBe(200);
    const firecrawl = await api('POST', '/v1/scrape', { url: article(), formats: ['markdown'] });
    expect(firecrawl.status, JSON.stringify(firecrawl.body)).toBe(200);
    const wholeFormats = whole.body.formats as Record<string, string>;
    const mainFormats = main.body.formats as Record<string, string>;
    const firecrawlMarkdown = (firecrawl.body.data as Record<string, string>).markdown;
    for (const text of [wholeFormats.markdown, wholeFormats.text, mainFormats.markdown, mainFormats.text, firecrawlMarkdown]) expect(text).toContain(expectedDocuments.articleText);
    for (const boilerplate of expectedDocuments.boilerplate) {
      expect(wholeFormats.text).toContain(boilerplate);
      expect(mainFormats.markdown).not.toContain(boilerplate);
      expect(mainFormats.text).not.toContain(boilerplate);
      expect(firecrawlMarkdown).not.toContain(boilerplate);
    }
  }, 90_000);

  it('scrapes a PDF into its text', async () => {
    const res = await api('POST', '/scrape', { url: `${site.origin}${expectedDocuments.pdfPath}`, formats: ['markdown', 'text'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const formats = res.body.formats as Record<string, string>;
    expect(formats.markdown?.startsWith(`# ${expectedDocuments.pdfTitle}\n`)).toBe(true);
    for (const line of expectedDocuments.pdfText) {
      expect(formats.markdown).toContain(line);
      expect(formats.text).toContain(line);
    }
  }, 60_000);

  it('crawls with downloads: linked files listed per page, one object per hash, the linked PDF a page with its text', async () => {
    const submitted = await api('POST', '/crawl', {
      start_urls: [article()], depth: 1, sitemap: 'skip', ignore_cache: true, formats: ['markdown'],
      downloads: { types: ['image/*', 'application/pdf'], max_bytes: 1_000_000 },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const jobId = submitted.body.job_id as string;
    const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 90_000, `job ${jobId} over`);
    expect(status.body.status).toBe('finished');
    const pages = (await api('GET', `/jobs/${jobId}/pages?limit=100`)).body.pages as { fetch_id: string; url: string; ok: boolean; formats: { format: string }[]; downloads: { url: string; sha256: string; content_type: string | null; bytes: number }[] }[];
    const entry = pages.find((p) => p.url === article())!;
    expect(entry.downloads.map((d) => new URL(d.url).pathname).sort()).toEqual([expectedDocuments.pdfPath, ...expectedDocuments.images].sort());
    const images = entry.downloads.filter((d) => d.content_type === 'image/png');
    expect(images).toHaveLength(2);
    expect(images[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(images[1]!.sha256).toBe(images[0]!.sha256);
    const file = await fetch(`${base}/jobs/${jobId}/pages/${entry.fetch_id}/downloads/${images[0]!.sha256}`, { headers: { authorization: `Bearer ${key}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await file.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
    // The PDF the article links is a page of the crawl too, its Markdown the report's text.
    const pdfPage = pages.find((p) => new URL(p.url).pathname === expectedDocuments.pdfPath)!;
    expect(pdfPage.formats.map((f) => f.format)).toEqual(['markdown']);
    const md = await fetch(`${base}/jobs/${jobId}/pages/${pdfPage.fetch_id}/content?format=markdown`, { headers: { authorization: `Bearer ${key}` } });
    expect(await md.text()).toContain(expectedDocuments.pdfText[2]);
  }, 120_000);
});
