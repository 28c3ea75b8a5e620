/**
 * PDFs and downloads in the PageProcessor, against a real HTTP server and the real fetcher: a PDF
 * answer is read (bounded) and handed to the parse step as a document when the job keeps text or
 * Markdown, and left unread otherwise; a page's linked files are fetched through robots.txt and
 * the host's politeness like its pages, kept only when their type and size are what the job asked.
 * The parse step here is a recorder (the worker's parse threads derive the text: parse-work.ts).
 */
import type { CrawlSpec } from '@trawl/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { DEFAULT_DOCUMENT_LIMITS } from '../fetch/document-limits.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { fetchId } from '../url/normalise.ts';
import { parsePage } from '../parse/parse-page.ts';
import { PageProcessor, type ParseJob, type ParseStep } from './page-processor.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';

const JOB = '4e1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e12';
const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));
/** Bytes that start like a PDF: the fetcher reads by type, never by content. */
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(4000, 0x20)]);
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

let server: LocalServer;
let fetcher: HttpFetcher;
const jobs: ParseJob[] = [];
const parse: ParseStep = async (job) => {
  jobs.push(job);
  if (job.document) return { links: [], nextPage: null, items: [], cut: null, derived: { text: 'the text', markdown: 'the text\n' } };
  return parsePage({ html: job.html, url: job.url, finalUrl: job.finalUrl, spec: job.spec, limits: job.limits });
};

beforeAll(async () => {
  const send = (type: string, body: Buffer | string) => (_req: unknown, res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
  server = await startLocalServer({
    '/robots.txt': send('text/plain', 'User-agent: *\nDisallow: /private/\n'),
    '/doc.pdf': send('application/pdf', PDF),
    '/big.pdf': send('application/pdf', Buffer.concat([PDF, Buffer.alloc(10_000)])),
    '/page': send('text/html', '<html><body><a href="/doc.pdf">doc</a><img src="/logo.png"><img src="/fake.png"><a href="/private/secret.pdf">x</a><a href="/big.pdf">big</a></body></html>'),
    '/logo.png': send('image/png', PNG),
    '/fake.png': send('text/html', '<html>not an image</html>'),
  });
  fetcher = new HttpFetcher({ policy, totalTimeoutMs: 10_000 });
});
afterAll(async () => {
  await fetcher.close();
  await server.close();
});

const processor = (documents = { ...DEFAULT_DOCUMENT_LIMITS, pdfMaxBytes: 8000, pdfMaxPages: 7 }) =>
  new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({}), parse, documents });

const request = (path: string, over: Partial<CrawlSpec> = {}): FetchWithSpec => ({
  event_id: '0b6d9c1e-5a3f-5e7b-9c2d-000000000005',
  occurred_at: new Date(),
  causation_id: null,
  job_id: JOB,
  fetch_id: fetchId(JOB, `${server.origin}${path}`),
  url: `${server.origin}${path}`,
  depth: 0,
  referrer: null,
  spec: testSpec(over),
  spec_hash: null,
  params: {},
  cached: null,
  user_id: null,
});

describe('PDF pages', () => {
  it('are read and handed to the parse step as documents when the job keeps their text', async () => {
    jobs.length = 0;
    const page = await processor().process(request('/doc.pdf', { formats: ['markdown'] }));
    expect(page.result.data?.byteLength).toBe(PDF.byteLength);
    expect(page.derived).toEqual({ text: 'the text', markdown: 'the text\n' });
    expect(page.links).toEqual([]);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.document).toMatchObject({ mediaType: 'application/pdf', maxPages: 7 });
    expect(Buffer.from(jobs[0]!.document!.data).equals(PDF)).toBe(true);
  });

  it('are recorded unread when the job keeps no text, or when they are over the size limit', async () => {
    jobs.length = 0;
    const plain = await processor().process(request('/doc.pdf'));
    expect(plain.result.data).toBeUndefined();
    const big = await processor().process(request('/big.pdf', { formats: ['text'] }));
    expect(big.result.data).toBeUndefined();
    expect(big.result.bytes).toBeGreaterThan(8000);
    expect(jobs).toHaveLength(0);
    expect(plain.derived ?? null).toBeNull();
  });
});

describe('downloads', () => {
  const spec = { downloads: { types: ['application/pdf', 'image/*'], max_bytes: 6000 } };

  it('are found by the parse: linked files of the asked types, by extension', async () => {
    const page = await processor().process(request('/page', spec));
    expect(page.downloads).toEqual([`${server.origin}/doc.pdf`, `${server.origin}/private/secret.pdf`, `${server.origin}/big.pdf`, `${server.origin}/logo.png`, `${server.origin}/fake.png`]);
  });

  it('keep a file of the asked type and size, and skip what robots.txt, the type or the size refuse', async () => {
    const p = processor();
    const req = request('/page', spec);
    const pdf = await p.download(req, `${server.origin}/doc.pdf`);
    expect('data' in pdf && Buffer.from(pdf.data).equals(PDF)).toBe(true);
    const png = await p.download(req, `${server.origin}/logo.png`);
    expect(png).toMatchObject({ contentType: 'image/png' });
    expect(await p.download(req, `${server.origin}/fake.png`)).toEqual({ skipped: 'type text/html' });
    expect(await p.download(req, `${server.origin}/private/secret.pdf`)).toEqual({ skipped: 'robots.txt disallows it' });
    expect(await p.download(req, `${server.origin}/big.pdf`)).toEqual({ skipped: 'over 6000 bytes' });
    expect(server.hits).not.toContain('/private/secret.pdf');
  });

  it('are capped by the operator\'s ceiling whatever the job asks', async () => {
    const p = processor({ ...DEFAULT_DOCUMENT_LIMITS, downloadMaxBytes: 100 });
    expect(await p.download(request('/page', spec), `${server.origin}/doc.pdf`)).toEqual({ skipped: 'over 100 bytes' });
  });
});
