/**
 * Formats end to end: a frontier and a worker as separate processes on the real stack crawl a
 * generated site with `formats: ["html", "markdown"]` into a fresh bucket of the real S3 (the local
 * stack's S3Proxy). Every HTML page's PageFetched names its body and Markdown; the bucket holds
 * exactly the objects the events name, each whole.
 */
import { randomUUID } from 'node:crypto';
import { contentHash, ContentStore, contentStoreConfig } from '@trawl/content';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { JobCompleted, PageFetched } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Pipeline } from '../src/pipeline.ts';

let site: TestSite;
let pipeline: Pipeline | undefined;
let store: ContentStore | undefined;
const bucket = `trawl-e2e-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  site = await createTestSite({ pages: 30, linksPerPage: 3, itemsPerPage: 2, traps: false });
});
afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  if (store) {
    await store.delete(await store.list());
    store.close();
  }
});

it('stores every HTML page once with its Markdown, and the events name exactly what is stored', async () => {
  store = new ContentStore({ ...contentStoreConfig(), bucket });
  pipeline = await Pipeline.start({ env: { TRAWL_S3_BUCKET: bucket } });
  pipeline.spawn('frontier');
  pipeline.spawn('worker');
  const jobId = randomUUID();
  await pipeline.producer.emit(
    'JobDispatched',
    {
      job_id: jobId, user_id: 'e2e', target_id: null, schedule_id: null, search_url: site.home, start_urls: [site.home], keywords: [], location: null,
      spec: { ...crawlSpec(null, { depth: 3, max_pages: 10_000, formats: ['html', 'markdown'] }), ...site.spec, formats: ['html', 'markdown'] },
      attempt: 1,
      params: {},
    },
    { topic: pipeline.topics.jobs },
  );
  await pipeline.waitFor((events) => events.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId), 150_000, `JobCompleted of ${jobId}`);
  const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.pages]);
  const fetched = events.filter((e) => e.event.name === 'PageFetched' && (e.event.value as PageFetched).job_id === jobId).map((e) => e.event.value as PageFetched);
  const html = fetched.filter((f) => f.parsed);
  expect(html.length).toBeGreaterThan(10);
  const named = new Set<string>();
  for (const page of html) {
    expect(page.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(page.formats.map((f) => f.format)).toEqual(['html', 'markdown']);
    expect(page.formats[0]!.hash).toBe(page.content_hash);
    for (const f of page.formats) named.add(f.hash);
  }
  for (const page of fetched.filter((f) => !f.parsed)) expect(page.content_hash).toBeNull();
  const stored = await store.list();
  expect(stored.sort()).toEqual([...named].sort());
  for (const hash of stored) expect(contentHash((await store.get(hash)).body)).toBe(hash);
  const home = html.find((f) => f.url === site.home)!;
  const md = (await store.get(home.formats[1]!.hash)).body.toString('utf8');
  expect(md.length).toBeGreaterThan(0);
}, 240_000);
