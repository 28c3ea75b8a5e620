/**
 * Chaos, network faults (`npm run test:chaos` only, about three minutes each; issue 36, item 4): a
 * service process in a network namespace of its own, its path to one part of the stack through a
 * veth pair the test owns (netns.ts says how, and why relays), and that path degraded and then cut:
 *
 * - a worker, its brokers 200 ms ± 50 ms away with 5% loss while it crawls, then partitioned from
 *   them for 30 s, then healed;
 * - the frontier, Postgres degraded the same way and then cut for 30 s, then healed.
 *
 * The rest of the pipeline runs outside the namespace on the shared stack (its own topics,
 * database and ClickHouse database, as every chaos scenario): the faults exist only on the test's
 * own veths, so nothing the shared stack serves to others is touched. After each: the exact page
 * set, JobCompleted once, both read models equal to the log, and replays equal to the live ones.
 * Skipped, with the reason printed, where `ip netns` is not allowed (not root, no CAP_NET_ADMIN).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import { endpoints } from '@trawl/streams';
import type { ClickHouse } from '@trawl/projector-ch';
import { Pipeline } from '../../src/pipeline.ts';
import { Netns, netnsDenied, type Impairment } from './netns.ts';
import {
  RETRY_ENV, SITE_OPTIONS, clickhouseOf, crawlOutcome, dispatchJob, expectExactCrawl, expectReadModelsEqualLog, expectReplaysEqualLive, hostPort, logFigures, pagesInLog,
  report, sleep, timeToProgress, waitCompleted, waitPages,
} from './support.ts';

const IMPAIRMENT: Impairment = { delayMs: 200, jitterMs: 50, lossPercent: 5 };
const PARTITION_MS = Number(process.env.TRAWL_CHAOS_PARTITION_MS ?? 30_000);

let denied: string | null = null;
let site: TestSite;
let pipeline: Pipeline | undefined;
let ch: ClickHouse | undefined;
let ns: Netns | undefined;

beforeAll(async () => {
  denied = await netnsDenied();
  if (denied) console.log(`CHAOS network faults skipped: ${denied}`);
  site = await createTestSite(SITE_OPTIONS);
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await ns?.close();
  ns = undefined;
  await ch?.close();
  ch = undefined;
  await pipeline?.stop();
  pipeline = undefined;
  site.reset();
});

const port = (url: string, dflt: number) => hostPort(url, dflt).port;

/** The ports of the shared stack's parts a service uses, as the namespace's relays must carry them. */
function stackPorts(p: Pipeline) {
  const e = endpoints();
  return {
    brokers: e.kafkaBrokers.map((b) => port(b, 9092)),
    others: [port(e.schemaRegistryUrl, 8081), port(p.db.url, 5432), port(e.s3Url, 9100)],
  };
}

function expectAllAlive(p: Pipeline): void {
  expect(p.children.filter((c) => !c.process.killed && c.process.exitCode !== null).map((c) => `${c.app} exited ${c.process.exitCode}`)).toEqual([]);
}

/**
 * The fault's timeline, the same for both scenarios: degraded from the dispatch until `pagesFirst`
 * pages are logged, then partitioned for PARTITION_MS, then healed; the crawl must then complete exactly.
 */
async function degradeThenPartition(p: Pipeline, n: Netns, jobId: string, pagesFirst: number) {
  const degradedAt = Date.now();
  await waitPages(p, jobId, pagesFirst, 240_000);
  const degradedMs = Date.now() - degradedAt;
  await n.unimpair();
  const linkBefore = await n.faultyLinkOpen();
  await n.partition();
  const partitionedAt = Date.now();
  // Bytes already past the veth when it was cut still land: counted from a moment after.
  await sleep(3_000);
  const atCut = await pagesInLog(p, jobId)();
  // The cut is real: nothing crosses the link (a connection from inside does not open).
  expect({ before: linkBefore, during: await n.faultyLinkOpen() }).toEqual({ before: true, during: false });
  await sleep(Math.max(0, PARTITION_MS - (Date.now() - partitionedAt)));
  const atHeal = await pagesInLog(p, jobId)();
  await n.heal();
  const healedAt = Date.now();
  const progress = timeToProgress(pagesInLog(p, jobId), 240_000, atHeal);
  expect(await n.faultyLinkOpen()).toBe(true);
  await waitCompleted(p, jobId, 360_000);
  const healToCompletedMs = Date.now() - healedAt;
  return { degradedMs, pagesWhileDegraded: pagesFirst, impairedChunks: { ...n.impaired }, partitionMs: healedAt - partitionedAt, pagesLoggedWhilePartitioned: atHeal - atCut, atHeal, healedAt, progress, healToCompletedMs };
}

describe('chaos: network faults between a service in its own namespace and the stack', () => {
  it(`o. worker: brokers 200 ms ± 50 ms away with 5% loss while it crawls, then partitioned for ${PARTITION_MS / 1000} s, healed: the job completes exactly`, async (ctx) => {
    if (denied) return ctx.skip(denied);
    const p = (pipeline = await Pipeline.start({ env: RETRY_ENV }));
    ch = clickhouseOf(p);
    const ports = stackPorts(p);
    ns = await Netns.create({ faulty: ports.brokers, clean: [...ports.others, port(site.origin, 80)] });
    p.spawn('projector-pg');
    p.spawn('projector-ch');
    p.spawn('frontier');
    // The only worker: every page of the crawl is fetched and reported across the faulty link.
    p.spawn('worker', {}, { prefix: ns.exec });
    await ns.impair(IMPAIRMENT);
    const jobId = await dispatchJob(p, site, { hostDelayMs: 300, hostConcurrency: 2 });
    const t = await degradeThenPartition(p, ns, jobId, 15);
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: t.healedAt });
    expectAllAlive(p);
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    // Cut off from its brokers, the worker can report nothing.
    expect(t.pagesLoggedWhilePartitioned).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report('o worker partitioned from the brokers', {
      impairment: ns.impairment, ...IMPAIRMENT, degradedMs: t.degradedMs, pagesWhileDegraded: t.pagesWhileDegraded, impairedChunks: t.impairedChunks, partitionMs: t.partitionMs,
      pagesLoggedWhilePartitioned: t.pagesLoggedWhilePartitioned, firstProgressAfterHealMs: await t.progress, healToCompletedMs: t.healToCompletedMs,
      readModelsEqualLogMs: rm.caughtUpMs, ...figures, lostRows: rm.lostRows, replay,
    });
  });

  it(`p. frontier: Postgres 200 ms ± 50 ms away with 5% loss, then partitioned for ${PARTITION_MS / 1000} s, healed: the job completes exactly`, async (ctx) => {
    if (denied) return ctx.skip(denied);
    const p = (pipeline = await Pipeline.start({ env: RETRY_ENV }));
    ch = clickhouseOf(p);
    const ports = stackPorts(p);
    const pg = port(p.db.url, 5432);
    ns = await Netns.create({ faulty: [pg], clean: [...ports.brokers, ...ports.others.filter((x) => x !== pg)] });
    p.spawn('projector-pg');
    p.spawn('projector-ch');
    p.spawn('frontier', {}, { prefix: ns.exec });
    p.spawn('worker');
    p.spawn('worker');
    await ns.impair(IMPAIRMENT);
    const jobId = await dispatchJob(p, site, { hostDelayMs: 300, hostConcurrency: 2 });
    const t = await degradeThenPartition(p, ns, jobId, 15);
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: t.healedAt });
    expectAllAlive(p);
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report('p frontier partitioned from Postgres', {
      impairment: ns.impairment, ...IMPAIRMENT, degradedMs: t.degradedMs, pagesWhileDegraded: t.pagesWhileDegraded, impairedChunks: t.impairedChunks, partitionMs: t.partitionMs,
      pagesLoggedWhilePartitioned: t.pagesLoggedWhilePartitioned, firstProgressAfterHealMs: await t.progress, healToCompletedMs: t.healToCompletedMs,
      readModelsEqualLogMs: rm.caughtUpMs, ...figures, lostRows: rm.lostRows, replay,
    });
  });
});
