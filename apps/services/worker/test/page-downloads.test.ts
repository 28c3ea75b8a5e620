/**
 * A page's downloads at the worker, against the real S3 (a fresh bucket): each file is stored
 * under its sha-256 once — two files with the same bytes are one object, a file linked again is
 * not fetched again within the job — and listed on the page's PageFetched; a file the processor
 * does not keep, or one that fails, is left out and the page goes on. The processor's download
 * (robots.txt, politeness, egress, type and size) is @trawl/crawl's page-processor-documents.test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ContentStore, contentHash, contentStoreConfig } from '@trawl/content';
import { testContentStore } from '@trawl/content/testing';
import { crawlSpec } from '@trawl/store';
import { pageEvents, type DownloadedFile, type FetchWithSpec, type PageProcessor, type ProcessedPage } from '@trawl/crawl';
import { testLogger } from '@trawl/streams/testing';
import { PageContentStore } from '../src/page-content-store.ts';
import { PageDownloads } from '../src/page-downloads.ts';

const logger = testLogger('worker-page-downloads');

class CountingStore extends ContentStore {
  writes = 0;
  override write(body: Uint8Array, mediaType: string, hash?: string) {
    this.writes++;
    return super.write(body, mediaType, hash);
  }
}

/** The processor's download, as files by URL; counts the fetches. */
class Files implements Pick<PageProcessor, 'download'> {
  fetched: string[] = [];
  constructor(private readonly files: Record<string, DownloadedFile | { skipped: string } | Error>) {}
  async download(_request: FetchWithSpec, url: string): Promise<DownloadedFile | { readonly skipped: string }> {
    this.fetched.push(url);
    const file = this.files[url];
    if (file instanceof Error) throw file;
    return file ?? { skipped: 'status 404' };
  }
}

const request = (jobId: string): FetchWithSpec => ({
  event_id: randomUUID(), occurred_at: new Date(), causation_id: null, job_id: jobId, fetch_id: randomUUID(), url: 'https://docs.example/', depth: 0, referrer: null,
  spec: { ...crawlSpec(null), downloads: { types: ['application/pdf', 'image/*'], max_bytes: 1_000_000 } }, spec_hash: null, params: {}, cached: null, user_id: null,
});

const bytes = (s: string) => new TextEncoder().encode(s);
const REPORT = bytes(`%PDF-1.4 report ${randomUUID()}`);
const LOGO = bytes(`PNG logo ${randomUUID()}`);

let s3: ContentStore;
let store: CountingStore;
beforeAll(async () => {
  s3 = await testContentStore();
  store = new CountingStore({ ...contentStoreConfig(), bucket: s3.bucket });
});
afterAll(async () => {
  await s3?.delete(await s3.list());
  s3?.close();
  store?.close();
});

describe('page downloads', () => {
  it('store each file once per hash, fetch a file once per job, and list what was kept on the PageFetched', async () => {
    const files = new Files({
      'https://docs.example/report.pdf': { url: 'https://docs.example/report.pdf', contentType: 'application/pdf', data: REPORT },
      // The same bytes under another name (a mirror): the same object.
      'https://cdn.example/mirror/report.pdf': { url: 'https://cdn.example/mirror/report.pdf', contentType: 'application/pdf', data: REPORT },
      'https://docs.example/logo.png': { url: 'https://docs.example/logo.png', contentType: 'image/png', data: LOGO },
      'https://docs.example/fake.png': { skipped: 'type text/html' },
      'https://docs.example/flaky.pdf': new Error('connection reset'),
    });
    const downloads = new PageDownloads(files, new PageContentStore(store, logger), logger);
    const job = randomUUID();
    const first = await downloads.run(request(job), ['https://docs.example/report.pdf', 'https://cdn.example/mirror/report.pdf', 'https://docs.example/logo.png', 'https://docs.example/fake.png', 'https://docs.example/flaky.pdf']);
    expect(first).toEqual([
      { url: 'https://docs.example/report.pdf', sha256: contentHash(REPORT), content_type: 'application/pdf', bytes: REPORT.byteLength },
      { url: 'https://cdn.example/mirror/report.pdf', sha256: contentHash(REPORT), content_type: 'application/pdf', bytes: REPORT.byteLength },
      { url: 'https://docs.example/logo.png', sha256: contentHash(LOGO), content_type: 'image/png', bytes: LOGO.byteLength },
    ]);
    // Two objects for three files kept: the report's bytes once.
    expect(store.writes).toBe(2);
    expect(Buffer.from((await s3.get(contentHash(REPORT))).body).equals(Buffer.from(REPORT))).toBe(true);

    // Another page of the job linking the report and the logo again: nothing fetched or written again; the failed file is tried again.
    const second = await downloads.run(request(job), ['https://docs.example/logo.png', 'https://docs.example/report.pdf', 'https://docs.example/flaky.pdf']);
    expect(second.map((d) => d.url)).toEqual(['https://docs.example/logo.png', 'https://docs.example/report.pdf']);
    expect(files.fetched.filter((u) => u === 'https://docs.example/report.pdf')).toHaveLength(1);
    expect(files.fetched.filter((u) => u === 'https://docs.example/flaky.pdf')).toHaveLength(2);
    expect(store.writes).toBe(2);

    // Another job fetches for itself (its own politeness, egress, request options), and stores nothing new.
    await downloads.run(request(randomUUID()), ['https://docs.example/report.pdf']);
    expect(files.fetched.filter((u) => u === 'https://docs.example/report.pdf')).toHaveLength(2);
    expect(store.writes).toBe(2);

    const page: ProcessedPage = {
      result: { url: 'https://docs.example/', finalUrl: 'https://docs.example/', status: 200, contentType: 'text/html', bytes: 10, wireBytes: 10, fetchMs: 1, body: '<p>x</p>', isHtml: true, truncated: false, redirects: [], retryAfterMs: null, charset: 'utf-8', renderMode: 'http' },
      links: [], items: [], nextPage: null, parsed: true, cut: null, storedDownloads: first,
    };
    expect(pageEvents(request(job), page, 1).fetched.downloads).toEqual(first);
  });
});
