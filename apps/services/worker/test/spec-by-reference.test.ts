/**
 * FetchRequested carries its job's spec by reference: a job with a ~100 KB spec is crawled by the
 * real frontier and worker (their own wiring, child processes, topics of their own, a throw-away
 * database), each FetchRequested is under 1 KB on the wire, and the page is still fetched and its
 * items extracted with that spec — which the worker, starting with an empty cache, can only have
 * read from Postgres. An inline spec (events written before the reference) still works, and the
 * spec cache resolves a hash from Postgres alone.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { samples, type CrawlSpec, type FetchRequested, type ItemExtracted, type JobCompleted } from '@trawl/schemas';
import { readEvents, readTopics, RetriableError } from '@trawl/streams';
import { poisonWorld, waitFor, type AppProcess } from '@trawl/streams/testing';
import { specHash } from '@trawl/crawl';
import { CRAWL_SPEC_MIGRATIONS, CRAWL_SPECS_OWNER, crawlSpec, createPool, migrate, saveCrawlSpecs, type Pool } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpecCache } from '../src/spec-cache.ts';

const world = poisonWorld('spec-by-reference', { database: () => createTestDatabase('trawl_test_spec_reference') });
const topics = { jobs: world.topic('trawl.jobs'), items: world.topic('trawl.items'), fetch: world.topic('trawl.fetch') };
let site: Server;
let origin: string;
let pool: Pool;
let apps: AppProcess[] = [];

/** A spec of about 100 KB: 1,000 allowed hosts of ~100 characters that never come up here, and an item extractor. */
function bigSpec(): CrawlSpec {
  return {
    ...crawlSpec(null, { depth: 1, max_pages: 10 }),
    item_root: 'article.item',
    item_fields: [{ name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] }],
    allowed_hosts: Array.from({ length: 1_000 }, (_, i) => `h${String(i).padStart(4, '0')}-${'x'.repeat(82)}.example.org`),
  };
}

beforeAll(async () => {
  site = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const links = req.url === '/' ? '<a href="/a">a</a> <a href="/b">b</a>' : '';
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><article class="item"><h2>title of ${req.url}</h2></article>${links}</body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  await world.open();
  pool = createPool({ connectionString: world.db.url, max: 2 });
  // The test site's port alone: the worker refuses an allow-list that opens the stack's ports.
  const env = { TRAWL_FETCH_ALLOW: new URL(origin).host };
  apps = [await world.startApp('frontier', { readyWhen: '"partitions assigned"', env }), await world.startApp('worker', { readyWhen: '"partitions assigned"', env })];
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await world.close();
  await new Promise((resolve) => site?.close(resolve));
});

describe('FetchRequested with the spec by reference', () => {
  it('stays under 1 KB for a job with a 100 KB spec, and its pages are fetched with that spec, read from Postgres', async () => {
    const spec = bigSpec();
    const jobId = randomUUID();
    await world.producer.emit('JobDispatched', { ...samples.JobDispatched, job_id: jobId, start_urls: [`${origin}/`], spec }, { topic: topics.jobs, eventId: randomUUID() });
    const completed = await waitFor(
      async () => (await readEvents(world.kafka, world.codec, [topics.jobs])).map((e) => e.event).find((e) => e.name === 'JobCompleted' && (e.value as JobCompleted).job_id === jobId)?.value as JobCompleted | undefined,
      { timeoutMs: 90_000, intervalMs: 500, message: () => `the job to complete; logs:\n${apps.map((a) => a.tail(4000)).join('\n---\n')}` },
    );
    expect(completed).toMatchObject({ pages_fetched: 3, pages_failed: 0 });

    const requests: { bytes: number; value: number; event: FetchRequested }[] = [];
    for (const m of await readTopics(world.kafka, [topics.fetch])) {
      const event = (await world.codec.decode(m.value)).value as FetchRequested;
      if (event.job_id !== jobId) continue;
      const headerBytes = Object.entries(m.headers).reduce((n, [k, v]) => n + k.length + (v ? Buffer.byteLength(v as Buffer | string) : 0), 0);
      requests.push({ bytes: (m.key?.length ?? 0) + (m.value?.length ?? 0) + headerBytes, value: m.value?.length ?? 0, event });
    }
    const inline = await world.codec.encode(topics.fetch, 'FetchRequested', { ...requests[0]!.event, spec, spec_hash: null });
    console.info(`SPEC REFERENCE ${JSON.stringify({ specJsonBytes: JSON.stringify(spec).length, inlineValueBytes: inline.length, referenceValueBytes: requests.map((r) => r.value), referenceRecordBytes: requests.map((r) => r.bytes) })}`);
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.event.spec).toBeNull();
      expect(r.event.spec_hash).toBe(specHash(spec));
      expect(r.bytes).toBeLessThan(1024);
    }
    expect(inline.length).toBeGreaterThan(100_000);
    // The items prove the worker had the spec: its item root and field come from nowhere else.
    const items = (await readEvents(world.kafka, world.codec, [topics.items])).map((e) => e.event).filter((e) => e.name === 'ItemExtracted' && (e.value as ItemExtracted).job_id === jobId);
    expect(items.map((e) => (e.value as ItemExtracted).fields.title).sort()).toEqual(['title of /', 'title of /a', 'title of /b']);
  }, 120_000);

  it('still fetches a FetchRequested written before the reference, with its spec inline', async () => {
    const jobId = randomUUID();
    const spec = { ...bigSpec(), allowed_hosts: [] };
    const { event_id: _e, occurred_at: _o, causation_id: _c, ...body } = { ...samples.FetchRequested, job_id: jobId, fetch_id: randomUUID(), url: `${origin}/inline`, depth: 0, referrer: null, spec, spec_hash: null };
    await world.producer.emit('FetchRequested', body, { topic: topics.fetch, key: new URL(origin).host, eventId: randomUUID() });
    const item = await waitFor(
      async () => (await readEvents(world.kafka, world.codec, [topics.items])).map((e) => e.event).find((e) => e.name === 'ItemExtracted' && (e.value as ItemExtracted).job_id === jobId)?.value as ItemExtracted | undefined,
      { timeoutMs: 60_000, intervalMs: 500, message: 'the inline request fetched' },
    );
    expect(item.fields.title).toBe('title of /inline');
  }, 90_000);

  it('resolves a hash from Postgres with an empty cache, then from the cache; a hash not stored is retriable', async () => {
    await migrate(pool, CRAWL_SPECS_OWNER, CRAWL_SPEC_MIGRATIONS);
    const spec = { ...bigSpec(), website_name: `cache ${randomUUID()}` };
    const hash = specHash(spec);
    await saveCrawlSpecs(pool, new Map([[hash, spec]]));
    let queries = 0;
    const counting = { query: ((...args: Parameters<Pool['query']>) => (queries++, pool.query(...args))) as Pool['query'] };
    const cache = new SpecCache(counting, 2);
    expect(cache.size).toBe(0);
    expect(await cache.get(hash)).toEqual(spec);
    expect(await cache.get(hash)).toEqual(spec);
    expect(queries).toBe(1);
    await expect(cache.get('0'.repeat(64))).rejects.toBeInstanceOf(RetriableError);
  });
});
