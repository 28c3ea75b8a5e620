/**
 * Against the real S3 endpoint of the environment (TRAWL_S3_URL, the local stack's S3Proxy by
 * default): each test has a fresh bucket.
 */
import { createServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { contentStoreConfig } from './content-config.ts';
import { contentHash, objectKey } from './content-key.ts';
import { ContentStore } from './content-store.ts';
import { ContentNotFoundError, ContentStoreUnavailableError } from './errors.ts';
import { storePageContent } from './page-content.ts';
import { testContentStore } from './testing.ts';

const filler = 'Every crate that comes off the ship is weighed, counted and written down by the clerk. '.repeat(8);
const PAGE = `<html><head><title>Dock report</title></head><body><nav><a href="/">Home</a></nav>
<article><h1>Dock report</h1><p>${filler}</p><p>Read the <a href="/manifest">manifest</a>.</p></article>
<footer>Footer text</footer></body></html>`;

let store: ContentStore | undefined;
afterEach(async () => {
  if (store) {
    await store.delete(await store.list());
    store.close();
  }
  store = undefined;
});

const text = (buf: Buffer): string => buf.toString('utf8');

describe('content store on S3', () => {
  it('stores the same page once, however many times it is put', async () => {
    store = await testContentStore();
    const first = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report' }, ['html', 'markdown']);
    const again = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report' }, ['html', 'markdown']);
    expect(first.written).toBe(2);
    expect(again.written).toBe(0);
    expect(again).toMatchObject({ contentHash: first.contentHash, formats: first.formats });
    expect((await store.list()).sort()).toEqual([first.contentHash, first.formats[1]!.hash].sort());
  });

  it('round-trips html, text and markdown (main content) of a known page', async () => {
    store = await testContentStore();
    const page = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report', mainContent: true }, ['html', 'text', 'markdown']);
    expect(page.contentHash).toBe(contentHash(new TextEncoder().encode(PAGE)));
    expect(page.formats.map((f) => f.format)).toEqual(['html', 'text', 'markdown']);
    const [html, plain, md] = await Promise.all(page.formats.map((f) => store!.get(f.hash)));
    expect(text(html!.body)).toBe(PAGE);
    expect(html!.mediaType).toBe('text/html; charset=utf-8');
    expect(text(plain!.body)).toContain('Every crate that comes off the ship');
    expect(text(plain!.body)).not.toContain('Footer text');
    expect(text(md!.body)).toMatch(/^# Dock report\n/);
    expect(text(md!.body)).toContain('[manifest](https://docks.example/manifest)');
    expect(md!.mediaType).toBe('text/markdown; charset=utf-8');
    for (const f of page.formats) expect(contentHash((await store.get(f.hash)).body)).toBe(f.hash);
  });

  it('stores a render\'s screenshot and PDF as they came, and lists no capture the fetch did not make', async () => {
    store = await testContentStore();
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
    const page = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report', captures: { screenshot: png } }, ['markdown', 'screenshot', 'pdf']);
    expect(page.formats.map((f) => f.format)).toEqual(['markdown', 'screenshot']);
    const shot = await store.get(page.formats[1]!.hash);
    expect(new Uint8Array(shot.body)).toEqual(png);
    expect(shot.mediaType).toBe('image/png');
    expect(page.formats[1]!.bytes).toBe(png.byteLength);
  });

  it("stores the parse step's metadata as JSON when asked, and lists none for a page without it", async () => {
    store = await testContentStore();
    const metadata = { title: 'Report', open_graph: { 'og:title': 'Report' }, json_ld: [{ '@type': 'Report' }] };
    const page = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report', metadata }, ['html', 'metadata']);
    expect(page.formats.map((f) => f.format)).toEqual(['html', 'metadata']);
    const stored = await store.get(page.formats[1]!.hash);
    expect(JSON.parse(text(stored.body))).toEqual(metadata);
    expect(stored.mediaType).toBe('application/json; charset=utf-8');
    const without = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report' }, ['metadata']);
    expect(without.formats).toEqual([]);
  });

  it('stores the body when only derived formats are asked, and says a missing object is missing', async () => {
    store = await testContentStore();
    const page = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report' }, ['text']);
    expect(await store.has(page.contentHash)).toBe(true);
    await store.delete([page.contentHash]);
    await expect(store.get(page.contentHash)).rejects.toBeInstanceOf(ContentNotFoundError);
    expect(await store.has(page.formats[0]!.hash)).toBe(true);
  });

  it('stores a PDF page as its bytes, with the text derived from it, no html, and itself as its pdf', async () => {
    store = await testContentStore();
    const pdf = new TextEncoder().encode('%PDF-1.7 a report');
    const page = await storePageContent(store, { html: '', document: { bytes: pdf, mediaType: 'application/pdf' }, finalUrl: 'https://docks.example/report.pdf', derived: { text: 'Tonnage: 42', markdown: '# Report\n\nTonnage: 42\n' } }, ['html', 'text', 'markdown', 'pdf']);
    expect(page.contentHash).toBe(contentHash(pdf));
    expect(page.formats.map((f) => f.format)).toEqual(['text', 'markdown', 'pdf']);
    expect(page.formats.find((f) => f.format === 'pdf')!.hash).toBe(page.contentHash);
    expect(text((await store.get(page.formats[0]!.hash)).body)).toBe('Tonnage: 42');
    expect((await store.get(page.contentHash)).body.equals(Buffer.from(pdf))).toBe(true);
    // A PDF whose text could not be read keeps its body, and no text.
    const unread = await storePageContent(store, { html: '', document: { bytes: pdf, mediaType: 'application/pdf' }, finalUrl: 'https://docks.example/report.pdf', derived: null }, ['markdown']);
    expect(unread).toMatchObject({ contentHash: contentHash(pdf), formats: [] });
  });

  it('derives the whole body by default and the main content with mainContent', async () => {
    store = await testContentStore();
    const whole = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report' }, ['text']);
    const main = await storePageContent(store, { html: PAGE, finalUrl: 'https://docks.example/report', mainContent: true }, ['text']);
    expect(text((await store.get(whole.formats[0]!.hash)).body)).toContain('Footer text');
    expect(text((await store.get(main.formats[0]!.hash)).body)).not.toContain('Footer text');
  });

  it("reads back an object the SDK's S3 client wrote (objects stored before the signed requests), with its media type, and its stored size", async () => {
    store = await testContentStore();
    const body = new TextEncoder().encode(PAGE);
    const hash = contentHash(body);
    const config = contentStoreConfig();
    const sdk = new S3Client({ endpoint: config.endpoint, region: config.region, forcePathStyle: true, credentials: { accessKeyId: config.accessKeyId!, secretAccessKey: config.secretAccessKey! }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
    const gz = gzipSync(body);
    try {
      await sdk.send(new PutObjectCommand({ Bucket: store.bucket, Key: objectKey(hash), Body: gz, ContentType: 'application/gzip', Metadata: { 'media-type': 'text/html; charset=utf-8' } }));
    } finally {
      sdk.destroy();
    }
    const got = await store.get(hash);
    expect(text(got.body)).toBe(PAGE);
    expect(got.mediaType).toBe('text/html; charset=utf-8');
    expect(await store.storedBytes(hash)).toBe(gz.byteLength);
    expect(await store.put(body, 'text/html; charset=utf-8')).toEqual({ hash, bytes: body.byteLength, written: false });
    expect(await store.storedBytes(contentHash(new TextEncoder().encode('absent')))).toBeUndefined();
  });

  it('tells a store that refuses (wrong secret) or does not answer (nothing listening) from a missing object', async () => {
    store = await testContentStore();
    const { hash } = await store.write(new TextEncoder().encode(PAGE), 'text/html');
    const wrong = new ContentStore({ ...contentStoreConfig(), bucket: store.bucket, secretAccessKey: 'not-the-secret' });
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const gone = new ContentStore({ ...contentStoreConfig(), bucket: store.bucket, endpoint: `http://127.0.0.1:${port}` });
    try {
      for (const s of [wrong, gone]) {
        await expect(s.has(hash)).rejects.toBeInstanceOf(ContentStoreUnavailableError);
        await expect(s.get(hash)).rejects.toBeInstanceOf(ContentStoreUnavailableError);
        await expect(s.write(new TextEncoder().encode('x'), 'text/plain')).rejects.toMatchObject({ code: 'TRAWL_CONTENT_STORE_UNAVAILABLE', retriable: true });
      }
    } finally {
      wrong.close();
      gone.close();
    }
  });

  it('stops a read when its signal aborts, with the signal\'s reason', async () => {
    store = await testContentStore();
    const { hash } = await store.write(new TextEncoder().encode(PAGE), 'text/html');
    const reason = new Error('page budget spent');
    await expect(store.get(hash, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});
