/**
 * The storage quota end to end: a frontier, a worker and projector-pg as separate processes on the
 * real stack crawl two generated sites for two users, each asking `formats: ["html", "markdown"]`,
 * into a fresh bucket of the real S3. One user is at their `storage_bytes` quota (0 of 0): their
 * crawl runs to the end — every page fetched and parsed, its PageFetched naming
 * STORAGE_QUOTA_EXCEEDED and nothing stored, the job log warning with the code. The other user's
 * crawl stores every page as before, and the bucket holds exactly what their events name. The
 * read model's figure (what `GET /quotas` shows) counts the second user's content, not the first's.
 */
import { randomUUID } from 'node:crypto';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { JobCompleted, PageFetched } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { CONFIG_MIGRATIONS, crawlSpec, inTransaction, migrate, readStorageUsage, recordJobs, setUserQuotas } from '@trawl/store';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Pipeline } from '../src/pipeline.ts';

let sites: TestSite[] = [];
let pipeline: Pipeline | undefined;
let store: ContentStore | undefined;
const bucket = `trawl-e2e-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  sites = await Promise.all([1, 2].map(() => createTestSite({ pages: 12, linksPerPage: 3, itemsPerPage: 1, traps: false })));
});
afterAll(async () => {
  await pipeline?.stop();
  await Promise.all(sites.map((s) => s.close()));
  if (store) {
    await store.delete(await store.list());
    store.close();
  }
});

it('a user at their storage quota crawls on without content, with the code in the events and the job log; another user keeps theirs', async () => {
  store = new ContentStore({ ...contentStoreConfig(), bucket });
  pipeline = await Pipeline.start({ env: { TRAWL_S3_BUCKET: bucket } });
  const pool = pipeline.db.pool;
  await migrate(pool, 'config', CONFIG_MIGRATIONS);
  const full = { user: 'e2e-full', job: randomUUID(), site: sites[0]! };
  const roomy = { user: 'e2e-roomy', job: randomUUID(), site: sites[1]! };
  await setUserQuotas(pool, full.user, { storage_bytes: 0 });
  // The jobs as the API records them when it starts them (the quota ledger names their users).
  await inTransaction(pool, (tx) => recordJobs(tx, [full, roomy].map((j) => ({ job_id: j.job, user_id: j.user, max_pages: 100 }))));
  pipeline.spawn('frontier');
  pipeline.spawn('worker');
  pipeline.spawn('projector-pg');
  for (const j of [full, roomy]) {
    const spec = { ...crawlSpec(null, { depth: 3, max_pages: 100, formats: ['html', 'markdown'] }), ...j.site.spec, formats: ['html', 'markdown'] };
    await pipeline.producer.emit(
      'JobDispatched',
      { job_id: j.job, user_id: j.user, target_id: null, schedule_id: null, search_url: j.site.home, start_urls: [j.site.home], keywords: [], location: null, spec, attempt: 1, params: {} },
      { topic: pipeline.topics.jobs },
    );
  }
  const completed = (events: Awaited<ReturnType<Pipeline['events']>>, jobId: string) => events.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId);
  await pipeline.waitFor((events) => completed(events, full.job) && completed(events, roomy.job), 180_000, 'both jobs completed');

  const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.pages]);
  const pagesOf = (jobId: string) => events.filter((e) => e.event.name === 'PageFetched' && (e.event.value as PageFetched).job_id === jobId).map((e) => e.event.value as PageFetched).filter((p) => p.parsed);
  // At the quota: every page fetched and parsed, nothing kept, the code on each.
  const refused = pagesOf(full.job);
  expect(refused.length).toBeGreaterThan(5);
  for (const p of refused) expect(p).toMatchObject({ status: 200, content_hash: null, formats: [], content_refused: 'STORAGE_QUOTA_EXCEEDED' });
  expect(refused.reduce((n, p) => n + p.item_count, 0)).toBeGreaterThan(0);
  // Another user: unaffected.
  const kept = pagesOf(roomy.job);
  expect(kept.length).toBeGreaterThan(5);
  const named = new Set<string>();
  for (const p of kept) {
    expect(p.content_refused).toBeNull();
    expect(p.formats.map((f) => f.format)).toEqual(['html', 'markdown']);
    for (const f of p.formats) named.add(f.hash);
  }
  // No new body: the bucket holds exactly what the second user's events name.
  expect((await store.list()).sort()).toEqual([...named].sort());

  // The job log shows the code; the read model counts the second user's content only.
  const logged = await waitForRows(pipeline, "SELECT level, msg, data FROM job_log WHERE job_id = $1 AND event = 'PageFetched'", [full.job], refused.length);
  for (const line of logged) expect(line).toMatchObject({ level: 'warn', msg: expect.stringContaining('content not kept: STORAGE_QUOTA_EXCEEDED'), data: { content_refused: 'STORAGE_QUOTA_EXCEEDED' } });
  await waitForRows(pipeline, 'SELECT 1 FROM job_pages WHERE job_id = $1 AND ok', [roomy.job], kept.length);
  const usage = await readStorageUsage(pool, [full.user, roomy.user]);
  expect(usage.get(full.user)).toBe(0);
  expect(usage.get(roomy.user)).toBe(kept.reduce((n, p) => n + p.formats.reduce((m, f) => m + Number(f.bytes), 0), 0));
}, 300_000);

async function waitForRows(p: Pipeline, sql: string, params: unknown[], count: number, timeoutMs = 60_000): Promise<Record<string, unknown>[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await p.db.pool.query(sql, params);
    if (rows.length >= count) return rows;
    if (Date.now() > until) throw new Error(`only ${rows.length} of ${count} rows for ${sql}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
