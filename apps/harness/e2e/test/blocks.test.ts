/**
 * Blocks end to end, through the public API (issue 33, blocks): the hard site's rate limit answers
 * 200 with a captcha past five pages a client, and its notice page matches a declared
 * `block_patterns`. A crawl of it with `formats: ["html"]` stores no captcha and no notice: each
 * such page fails TRAWL_BLOCKED after its retries, never as content and never parsed; the job view
 * counts them (`pages_blocked`), and the worker's metrics count every blocked answer.
 *
 * Adaptive throttling's choice is in the job view too: a crawl with `adaptive_throttle` shows the
 * host's delay and concurrency (`throttle`), from the PageFetched that said them.
 */
import { randomUUID } from 'node:crypto';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import { createHardSite, expectedRateLimit, rateLimitRecord, type HardSite } from '@trawl/demo-site';
import type { PageFailed, PageFetched } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

let site: HardSite;
let pipeline: Pipeline;
let base: string;
let key: string;
let store: ContentStore | undefined;
const bucket = `trawl-e2e-${randomUUID().slice(0, 8)}`;

let api: Api;
let until: Until;

beforeAll(async () => {
  site = await createHardSite();
  store = new ContentStore({ ...contentStoreConfig(), bucket });
  // Short retry tiers: a blocked page goes through both, then ends as PageFailed.
  ({ pipeline, base, key, api, until } = await startApiPipeline({ env: { TRAWL_S3_BUCKET: bucket, TRAWL_FETCH_RETRY_DELAYS_MS: '200,400' }, users: ['blocked'] }));
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  if (store) {
    await store.delete(await store.list()).catch(() => undefined);
    store.close();
  }
});

it('stores no captcha and no declared block, and counts them blocked', async () => {
  const submitted = await api('POST', '/crawl', {
    start_urls: [`${site.origin}${expectedRateLimit.entry}`], depth: 1, sitemap: 'skip', ignore_cache: true, formats: ['html'],
    block_patterns: [expectedRateLimit.blockPattern],
  });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 120_000, `job ${jobId} over`);
  const pagesOfSite = expectedRateLimit.pages.length + 1; // the list, its pages, the notice
  // One client, no sessions: the first `limit` answers are pages; every other list page, and the notice, is a block.
  expect(status.body).toMatchObject({ status: 'finished', counters: { pages_fetched: expectedRateLimit.limit, pages_failed: pagesOfSite - expectedRateLimit.limit, pages_blocked: pagesOfSite - expectedRateLimit.limit } });

  const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.pages]);
  const fetched = events.filter((e) => e.event.name === 'PageFetched').map((e) => e.event.value as PageFetched).filter((p) => p.job_id === jobId);
  const failed = events.filter((e) => e.event.name === 'PageFailed').map((e) => e.event.value as PageFailed).filter((p) => p.job_id === jobId);
  expect(failed.map((f) => f.error_code)).toEqual(Array(pagesOfSite - expectedRateLimit.limit).fill('TRAWL_BLOCKED'));
  expect(failed.map((f) => new URL(f.url).pathname)).toContain(expectedRateLimit.noticePath);
  // Each blocked page was tried on every tier (3 attempts) and never became a PageFetched.
  expect(rateLimitRecord(site.origin).captchas).toBe((pagesOfSite - expectedRateLimit.limit - 1) * 3);
  expect(fetched.map((p) => new URL(p.url).pathname)).not.toContain(expectedRateLimit.noticePath);
  // What is stored is the pages themselves, never the captcha.
  for (const page of fetched) {
    const html = await fetch(`${base}/jobs/${jobId}/pages/${page.fetch_id}/content?format=html`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.text());
    expect(html).toContain('<title>');
    expect(html).not.toContain(expectedRateLimit.captchaText);
  }
  // The worker counted every blocked answer, by rule.
  const worker = pipeline.children.find((c) => c.app === 'worker')!;
  const metrics = await fetch(`${worker.operatorUrl}/metrics`).then((r) => r.text());
  const count = (rule: string) => Number(/\s(\d+)$/.exec(metrics.split('\n').find((l) => l.startsWith(`trawl_worker_blocked_total{rule="${rule}"}`)) ?? '')?.[1] ?? 0);
  expect(count('captcha')).toBe((pagesOfSite - expectedRateLimit.limit - 1) * 3);
  expect(count('pattern')).toBe(3);
}, 180_000);

it("shows the adaptive throttle's delay and concurrency per host in the job view", async () => {
  const submitted = await api('POST', '/crawl', {
    start_urls: [`${site.origin}/links/`], depth: 1, sitemap: 'skip', ignore_cache: true, adaptive_throttle: true,
  });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 120_000, `job ${jobId} over`);
  expect(status.body).toMatchObject({ status: 'finished', counters: { pages_failed: 0 } });
  const host = new URL(site.origin).host;
  const throttle = status.body.throttle as { host: string; delay_ms: number; concurrency: number; at: string }[];
  expect(throttle.map((t) => t.host)).toEqual([host]);
  const [setting] = throttle;
  // Within the job's bounds: at least one in flight, never over its host_concurrency (8 without a website).
  expect(setting!.concurrency).toBeGreaterThanOrEqual(1);
  expect(setting!.concurrency).toBeLessThanOrEqual(8);
  expect(setting!.delay_ms).toBeGreaterThanOrEqual(0);
  expect(Number.isNaN(Date.parse(setting!.at))).toBe(false);
  // Said on the page events, and the latest one said is what the view shows.
  const said = (await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.pages]))
    .filter((e) => e.event.name === 'PageFetched').map((e) => e.event.value as PageFetched).filter((p) => p.job_id === jobId && p.throttle !== null);
  expect(said.length).toBeGreaterThan(0);
  expect(said[said.length - 1]!.throttle).toEqual({ host, delay_ms: setting!.delay_ms, concurrency: setting!.concurrency });
}, 120_000);
