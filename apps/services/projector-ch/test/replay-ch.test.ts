import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChProjector, type ChProjector } from '../src/projector/live-projector.ts';
import { replayCh } from '../src/replay/replay-ch.ts';
import { analyticsChecksum } from '../src/queries/consistency.ts';
import { jobTotals, jobTotalsFromFacts, pagesPerMinute } from '../src/queries/analytics.ts';
import { quote } from '@trawl/clickhouse';
import { nextPositions } from '../src/projector/positions.ts';
import { createHarness, type Harness } from './support/harness.ts';
import { expectedTotals } from './support/oracle.ts';
import { syntheticJob } from '@trawl/streams/testing';

describe('replayCh against the real stack', () => {
  let h: Harness;
  let projector: ChProjector | undefined;
  /** A time between the first crawl and the later ones (Kafka timestamps are the produce times). */
  let midway: Date;
  let crawl: ReturnType<typeof syntheticJob>[];
  const replay = (extra: Parameters<typeof replayCh>[0] = {}) =>
    replayCh({ clickhouseUrl: h.clickhouseUrl, database: h.ch.database, databaseUrl: h.pg.url, kafka: h.kafka, logger: h.logger, topics: h.topics, progress: null, ...extra });

  beforeAll(async () => {
    h = await createHarness('replaych');
    const start = new Date(Date.now() - 3_600_000);
    crawl = Array.from({ length: 10 }, (_, j) => syntheticJob(j, { jobs: 0, pagesPerJob: 40, seed: 31, runId: h.id, start }));
    for (const job of crawl) await h.produce(job);
    // Two jobs' page events again at new positions (a worker's re-fetch after a crash): a replay
    // must absorb them as the live projector does.
    for (const job of crawl.slice(3, 5)) await h.produce(job.filter((e) => e.name === 'PageFetched' || e.name === 'PageFailed'));
    projector = await startChProjector({
      clickhouseUrl: h.clickhouseUrl, database: h.ch.database, databaseUrl: h.pg.url, kafka: h.kafka, logger: h.logger,
      topics: h.topics, groupId: `projector-ch-${h.id}`, maxRows: 1000, maxDelayMs: 200, statsLogIntervalMs: 0,
    });
    await h.waitForCatchUp();
    await new Promise((r) => setTimeout(r, 1000));
    midway = new Date();
    await new Promise((r) => setTimeout(r, 1000));
  });

  afterAll(async () => {
    await projector?.stop();
    await h?.close();
  });

  it('rebuilds to equal checksums and swaps while events keep flowing and queries keep answering', async () => {
    // What the replay must read at least: every event below the live tables' positions when it
    // starts. Not simply the whole log: a partition may end in events the live projector left out
    // (the re-emitted page events above), which move no stored position, and the replay reads up
    // to the positions the live tables hold, so it may stop before them.
    const livePositions = new Map<string, bigint>();
    for (const [table, topic] of [['job_events', h.topics.jobs], ['page_fetches', h.topics.pages], ['items', h.topics.items]] as const) {
      for (const [p, next] of await nextPositions(h.ch, table)) livePositions.set(`${topic}:${p}`, next);
    }
    const logged = (await h.events()).filter((e) => BigInt(e.offset) < (livePositions.get(`${e.topic}:${e.partition}`) ?? 0n)).length;
    expect(logged).toBeGreaterThan(1000);
    let producing = true;
    const producer = (async () => {
      for (let j = 100; producing; j++) {
        await h.produce(syntheticJob(j, { jobs: 0, pagesPerJob: 15, seed: 32, runId: h.id }));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    let reading = true;
    let reads = 0;
    const readErrors: unknown[] = [];
    const reader = (async () => {
      while (reading) {
        await pagesPerMinute(h.ch).then(() => reads++, (err: unknown) => readErrors.push(err));
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const phases: string[] = [];
    const report = await replay({ batchSize: 1000, swapThreshold: 100, progress: (p) => phases.push(p.phase) }).finally(async () => {
      producing = false;
      await producer;
      await new Promise((r) => setTimeout(r, 300));
      reading = false;
      await reader;
    });
    expect(report.verified).toBe('live');
    // At least everything the live tables held when the replay started (more arrive while it runs).
    expect(report.events).toBeGreaterThanOrEqual(logged);
    expect(phases).toEqual(expect.arrayContaining(['catch-up', 'swap', 'done']));
    expect(readErrors).toEqual([]);
    expect(reads).toBeGreaterThan(5);
    // Page facts carry their job's user: the replay reads the job events before the pages.
    const withUser = new Set((await h.events()).flatMap(({ event }) => ('user_id' in event.value && event.value.user_id ? [event.value.job_id] : [])));
    const untagged = await h.ch.rows<{ job_id: string }>("SELECT DISTINCT job_id FROM page_fetches FINAL WHERE user_id = ''");
    expect(withUser.size).toBeGreaterThan(0);
    expect(untagged.filter((r) => withUser.has(r.job_id))).toEqual([]);
    const leftovers = await h.ch.rows<{ name: string }>(`SELECT name FROM system.databases WHERE startsWith(name, ${quote(`${h.ch.database}_`)})`);
    expect(leftovers).toEqual([]);

    // The live projector goes on in the swapped-in tables; every event is there once.
    await h.waitForCatchUp();
    const expected = expectedTotals(await h.events());
    expect(await jobTotalsFromFacts(h.ch)).toEqual(expected);
    expect(await jobTotals(h.ch)).toEqual(expected);
  });

  it('re-projects from a time, keeping the facts before it, to the same content', async () => {
    // A job's page events again after the time, their first copies before it: the replay must
    // know the copied facts' ids (it answers the id check from memory) to absorb them as live did.
    await h.produce(crawl[0]!.filter((e) => e.name === 'PageFetched' || e.name === 'PageFailed'));
    // Then a new job: the live tables' positions (where the replay stops) move past the copies.
    await h.produce(syntheticJob(200, { jobs: 0, pagesPerJob: 40, seed: 33, runId: h.id }));
    await h.waitForCatchUp();
    const before = await analyticsChecksum(h.ch);
    const report = await replay({ from: midway });
    expect(report.events).toBeGreaterThan(0);
    expect(report.verified).toBe('live');
    expect(report.copied).toBeGreaterThan(0);
    expect(await analyticsChecksum(h.ch)).toEqual(before);
  });
});
