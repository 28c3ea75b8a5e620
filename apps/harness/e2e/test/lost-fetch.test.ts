/**
 * Issue 21 (invariant 8): a fetch that no outcome ever comes for still ends. A frontier requests
 * two seeds; before any worker runs, the first one's FetchRequested is deleted from trawl.fetch
 * (Kafka's DeleteRecords, what retention does to a request left in a wedged partition for days),
 * then a worker crawls the rest. The job must complete with that one fetch failed as FETCH_LOST,
 * once the fetch deadline has passed since its last progress — and a real outcome for it that
 * arrives afterwards must change nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { FetchRequested, JobCompleted, PageFailed, PageFetched } from '@trawl/schemas';
import { readEvents, readProjectionOffsets, watermarks, type LoggedEvent } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import { Pipeline } from '../src/pipeline.ts';

const DEADLINE_MS = 8_000;
// The deadline must exceed the retry path (1.2 s of tiers + 4 attempts × 1.5 s): the frontier refuses to start otherwise.
const ENV = { TRAWL_FETCH_RETRY_DELAYS_MS: '200,400,600', TRAWL_FETCH_TIMEOUT_MS: '1500', TRAWL_FETCH_DEADLINE: `${DEADLINE_MS}ms` };
const SWEEP_MS = 1_000; // a tenth of the deadline, at least 1 s

let site: TestSite;
let pipeline: Pipeline | undefined;

beforeAll(async () => {
  site = await createTestSite({ pages: 15, linksPerPage: 2, itemsPerPage: 1 });
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const of = (events: LoggedEvent[], name: string, jobId: string) =>
  events.filter((e) => e.event.name === name && (e.event.value as { job_id: string }).job_id === jobId);

describe('a lost fetch', () => {
  it('ends as FETCH_LOST once its job has been silent for the deadline; a late outcome changes nothing', async () => {
    const p = (pipeline = await Pipeline.start({ env: ENV }));
    p.spawn('frontier');
    const jobId = randomUUID();
    const lostUrl = `${site.origin}/p/1`;
    await p.producer.emit(
      'JobDispatched',
      {
        job_id: jobId,
        user_id: 'e2e',
        target_id: null,
        schedule_id: null,
        search_url: lostUrl,
        start_urls: [lostUrl, `${site.origin}/p/2`],
        keywords: [],
        location: null,
        spec: { ...crawlSpec(null, { depth: 1, max_pages: 100 }), ...site.spec },
        attempt: 1,
        params: {},
      },
      { topic: p.topics.jobs },
    );

    // Both seeds requested; no worker has run yet. Delete the first request from its partition.
    let requests: LoggedEvent[] = [];
    for (const until = Date.now() + 60_000; requests.length < 2; await sleep(250)) {
      if (Date.now() > until) throw new Error('the frontier did not request the seeds within 60 s');
      requests = of(await readEvents(p.kafka, p.codec, [p.topics.fetch]), 'FetchRequested', jobId);
    }
    const lost = requests.find((r) => (r.event.value as FetchRequested).url === lostUrl)!;
    const samePartition = requests.filter((r) => r.partition === lost.partition);
    expect(samePartition.every((r) => BigInt(r.offset) >= BigInt(lost.offset))).toBe(true); // nothing else goes with it
    const admin = p.kafka.admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [p.topics.fetch] }); // deleteTopicRecords needs the partition leaders
      await admin.deleteTopicRecords({ topic: p.topics.fetch, partitions: [{ partition: lost.partition, offset: String(BigInt(lost.offset) + 1n) }] });
    } finally {
      await admin.disconnect();
    }
    const left = of(await readEvents(p.kafka, p.codec, [p.topics.fetch]), 'FetchRequested', jobId).map((r) => (r.event.value as FetchRequested).url);
    expect(left).toEqual([`${site.origin}/p/2`]);

    p.spawn('worker');
    const startedAt = Date.now();
    const events = await p.waitFor((ev) => of(ev, 'JobCompleted', jobId).length > 0, 120_000, `JobCompleted of ${jobId}`);
    const completed = of(events, 'JobCompleted', jobId);
    const failed = of(events, 'PageFailed', jobId).map((e) => e.event.value as PageFailed);
    const fetched = of(events, 'PageFetched', jobId);
    const done = completed[0]!.event.value as JobCompleted;

    expect(completed).toHaveLength(1);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ url: lostUrl, error_code: 'FETCH_LOST', fetch_id: (lost.event.value as FetchRequested).fetch_id });
    expect(done).toMatchObject({ outcome: 'finished', pages_failed: 1, pages_fetched: fetched.length, urls_seen: fetched.length + 1 });
    // /p/2, its children and home (its parent); /p/1's subtree was never reached.
    expect(fetched.map((e) => (e.event.value as PageFetched).url).sort()).toEqual([`${site.origin}/`, `${site.origin}/p/2`, `${site.origin}/p/5`, `${site.origin}/p/6`]);
    // Within the deadline (and one sweep) of the job's last progress, measured on the log's timestamps.
    const lastOutcome = Math.max(...fetched.map((e) => Number(e.timestamp)));
    const lateBy = Number(completed[0]!.timestamp) - lastOutcome;
    expect(lateBy).toBeGreaterThanOrEqual(DEADLINE_MS);
    expect(lateBy).toBeLessThan(DEADLINE_MS + SWEEP_MS + 10_000);
    console.log(`LOST-FETCH ${JSON.stringify({ deadlineMs: DEADLINE_MS, completedAfterLastOutcomeMs: lateBy, sinceWorkerStartMs: Date.now() - startedAt, fetched: fetched.length, lost: failed.length })}`);

    // The real outcome, late (a worker that had it in flight), with links the crawl has not seen.
    await p.producer.emit(
      'PageFetched',
      {
        job_id: jobId,
        fetch_id: failed[0]!.fetch_id,
        url: lostUrl,
        final_url: lostUrl,
        status: 200,
        content_type: 'text/html',
        bytes: 100,
        fetch_ms: 5,
        render_mode: 'http',
        depth: 0,
        links: [`${site.origin}/p/3`, `${site.origin}/q?id=4&kind=page`],
        next_page: null,
        item_count: 1,
        links_dropped: 0,
        truncated: false,
        parsed: true,
        attempt: 1,
        content_hash: null,
        formats: [],
        etag: null,
        last_modified: null,
        from_cache: null,
        sitemap_urls: [],
        sitemap_urls_dropped: 0,
        content_refused: null,
        canonical_url: null,
        notes: [],
        throttle: null, simhash: null, near_duplicate_of: null, downloads: [],
      },
      { topic: p.topics.pages },
    );
    // Until the frontier has applied everything on trawl.pages, the late outcome included.
    for (const until = Date.now() + 60_000; ; await sleep(250)) {
      const ends = await watermarks(p.kafka, [p.topics.pages]);
      const applied = new Map((await readProjectionOffsets(p.db.pool, 'frontier')).filter((o) => o.topic === p.topics.pages).map((o) => [o.partition, o.nextOffset]));
      if (ends.every((w) => (applied.get(w.partition) ?? 0n) >= w.high)) break;
      if (Date.now() > until) throw new Error('the frontier did not apply the late outcome within 60 s');
    }
    const after = await p.events();
    expect(of(after, 'JobCompleted', jobId)).toHaveLength(1);
    const requested = of(await readEvents(p.kafka, p.codec, [p.topics.fetch]), 'FetchRequested', jobId).map((r) => (r.event.value as FetchRequested).url);
    expect(requested).not.toContain(`${site.origin}/p/3`);
    expect(of(after, 'PageFetched', jobId).map((e) => (e.event.value as PageFetched).url)).toContain(lostUrl); // it is in the log, and absorbed
  }, 240_000);
});
