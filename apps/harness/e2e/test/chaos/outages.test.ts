/**
 * Chaos, part 2 (expensive: `npm run test:chaos` only, excluded from the normal apps/harness/e2e run):
 * outside parts taken away in the middle of a crawl, through a TCP proxy between the apps and
 * the part (other processes sharing the stack are never touched), a registry that answers 404
 * through an HTTP proxy, and real restarts of the broker, Postgres and ClickHouse (the stack's own
 * stop/start; skipped when this checkout's stack does not run the part).
 * After each: the exact page set, JobCompleted once, Postgres read models and ClickHouse
 * facts/rollups equal to the event log (and to each other), and both read models replayed from
 * that log beside the live ones to equal checksums.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import { endpoints, readTopics } from '@trawl/streams';
import { startHttpProxy, startTcpProxy, type HttpProxy, type TcpProxy } from '@trawl/streams/testing';
import { clickhouseDown, clickhouseStatus, clickhouseUp, createContext, kafkaDown, kafkaStatus, kafkaUp, loadCredentials, postgresDown, postgresStatus, postgresUp, stackLogger, withStackLock, type PartDown, type PartStatus, type PartUp, type StackContext } from '@trawl/stack';
import type { ClickHouse } from '@trawl/projector-ch';
import { Pipeline } from '../../src/pipeline.ts';
import {
  RETRY_ENV, SITE_OPTIONS, clickhouseOf, crawlOutcome, dispatchJob, expectExactCrawl, expectReadModelsEqualLog, expectReplaysEqualLive, hostPort, logFigures, pagesInLog, pgState,
  report, sleep, timeToProgress, viaProxy, waitCompleted, waitPages,
} from './support.ts';

const OUTAGE_MS = Number(process.env.TRAWL_CHAOS_OUTAGE_MS ?? 60_000);

let site: TestSite;
let pipeline: Pipeline | undefined;
let ch: ClickHouse | undefined;
let proxy: TcpProxy | undefined;
let httpProxy: HttpProxy | undefined;

beforeAll(async () => {
  site = await createTestSite(SITE_OPTIONS);
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await httpProxy?.close();
  httpProxy = undefined;
  await ch?.close();
  ch = undefined;
  await pipeline?.stop();
  pipeline = undefined;
  site.reset();
});

async function start(): Promise<Pipeline> {
  pipeline = await Pipeline.start({ env: RETRY_ENV });
  ch = clickhouseOf(pipeline);
  return pipeline;
}

const chPages = (c: ClickHouse, jobId: string) => async () => Number((await c.rows<{ n: string }>(`SELECT count() AS n FROM page_fetches WHERE job_id = '${jobId}'`))[0]?.n ?? 0);

/** Every child still running (none exited on its own during the fault). */
function expectAllAlive(p: Pipeline): void {
  expect(p.children.filter((c) => !c.process.killed && c.process.exitCode !== null).map((c) => `${c.app} exited ${c.process.exitCode}`)).toEqual([]);
}

describe('chaos: outside parts away mid-crawl', () => {
  it(`e. ClickHouse unreachable for ${OUTAGE_MS / 1000} s (proxy cut under projector-ch): analytics catch up, equal to the log and to Postgres`, async () => {
    const p = await start();
    const chUrl = endpoints().clickhouseUrl;
    proxy = await startTcpProxy(hostPort(chUrl, 8123));
    p.spawn('projector-pg');
    p.spawn('projector-ch', { CLICKHOUSE_URL: viaProxy(chUrl, proxy.port) });
    p.spawn('frontier');
    p.spawn('worker');
    p.spawn('worker');
    const jobId = await dispatchJob(p, site, { hostDelayMs: 150, hostConcurrency: 2 });
    await expect.poll(chPages(ch!, jobId), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(5);
    await proxy.cut();
    const atCut = await chPages(ch!, jobId)();
    await sleep(OUTAGE_MS);
    const atRestore = await chPages(ch!, jobId)();
    const pagesDuringOutage = (await pagesInLog(p, jobId)()) - atCut;
    await proxy.restore();
    const restoredAt = Date.now();
    const progress = timeToProgress(chPages(ch!, jobId));
    await waitCompleted(p, jobId);
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restoredAt });
    expectAllAlive(p);
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    expect(atRestore).toBe(atCut); // nothing reached ClickHouse while it was away
    const replay = await expectReplaysEqualLive(p);
    report('e ClickHouse outage', {
      outageMs: OUTAGE_MS, chRowsAtCut: atCut, crawlPagesDuringOutageApprox: pagesDuringOutage, firstProgressMs: await progress,
      analyticsEqualLogAndPgMs: rm.caughtUpMs, ...figures, lostRows: rm.lostRows, replay,
    });
  });

  it(`f. schema registry unreachable for ${OUTAGE_MS / 1000} s (proxy cut under every app): cached schemas keep the crawl going`, async () => {
    const p = await start();
    const registryUrl = endpoints().schemaRegistryUrl;
    proxy = await startTcpProxy(hostPort(registryUrl, 8081));
    const env = { SCHEMA_REGISTRY_URL: viaProxy(registryUrl, proxy.port) };
    for (const app of ['projector-pg', 'projector-ch', 'frontier', 'worker', 'worker'] as const) p.spawn(app, env);
    const jobId = await dispatchJob(p, site, { hostDelayMs: 300, hostConcurrency: 2 });
    await waitPages(p, jobId, 10);
    await expect.poll(async () => (await pgState(p, jobId))?.page_rows ?? 0, { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(5);
    await proxy.cut();
    const cutAt = Date.now();
    const atCut = await pagesInLog(p, jobId)();
    const pgAtCut = (await pgState(p, jobId))?.page_rows ?? 0;
    // The crawl goes on while the registry is away: pages are encoded and decoded with cached schemas.
    const progressDuringOutage = await timeToProgress(pagesInLog(p, jobId), OUTAGE_MS);
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - cutAt)));
    const atRestore = await pagesInLog(p, jobId)();
    const pgAtRestore = (await pgState(p, jobId))?.page_rows ?? 0;
    await proxy.restore();
    const restoredAt = Date.now();
    await waitCompleted(p, jobId);
    const completedMs = Date.now() - restoredAt;
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restoredAt });
    expectAllAlive(p);
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    expect(progressDuringOutage).not.toBeNull();
    expect(atRestore).toBeGreaterThan(atCut);
    expect(pgAtRestore).toBeGreaterThan(pgAtCut);
    const replay = await expectReplaysEqualLive(p);
    report('f schema registry outage', {
      outageMs: OUTAGE_MS, firstPageDuringOutageMs: progressDuringOutage, pagesProducedDuringOutage: atRestore - atCut,
      pgRowsProjectedDuringOutage: pgAtRestore - pgAtCut, restoreToCompletedMs: completedMs, readModelsEqualLogMs: rm.caughtUpMs, ...figures, lostRows: rm.lostRows, replay,
    });
  });

  it('g. Postgres outage (proxy cut under frontier and projector-pg for 30 s) mid-crawl: the job completes exactly, read models equal the log', async () => {
    const p = await start();
    const dbUrl = new URL(p.db.url);
    proxy = await startTcpProxy(hostPort(p.db.url, 5432));
    const proxied = new URL(p.db.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const env = { DATABASE_URL: proxied.toString() };
    p.spawn('projector-pg', env);
    p.spawn('projector-ch');
    p.spawn('frontier', env);
    p.spawn('worker');
    p.spawn('worker');
    const jobId = await dispatchJob(p, site, { hostDelayMs: 150, hostConcurrency: 2 });
    await waitPages(p, jobId, 10);
    await proxy.cut();
    const outageMs = Number(process.env.TRAWL_CHAOS_PG_OUTAGE_MS ?? 30_000);
    await sleep(outageMs);
    await proxy.restore();
    const restoredAt = Date.now();
    const progress = timeToProgress(pagesInLog(p, jobId));
    const pgProgress = timeToProgress(async () => (await pgState(p, jobId))?.page_rows ?? 0);
    await waitCompleted(p, jobId);
    const completedMs = Date.now() - restoredAt;
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restoredAt });
    expectAllAlive(p);
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report('g Postgres outage', {
      outageMs, database: dbUrl.pathname, firstCrawlProgressMs: await progress, firstReadModelProgressMs: await pgProgress, restoreToCompletedMs: completedMs,
      readModelsEqualLogMs: rm.caughtUpMs, ...figures, lostRows: rm.lostRows, replay,
    });
  });

  /**
   * A part of the stack stopped for real mid-crawl and started again by the stack's own functions
   * (a restart loses what a cut connection does not: prepared statements, sessions, in-flight
   * inserts, the server's caches). Skipped, with the reason, where this checkout's stack does not run it.
   */
  async function restartMidCrawl(
    ctx: { skip: (reason: string) => void },
    name: string,
    part: { status: (s: StackContext) => Promise<PartStatus>; down: (s: StackContext) => Promise<PartDown>; up: (s: StackContext) => Promise<PartUp>; usedHere?: (status: PartStatus) => boolean },
    downMs: number,
  ): Promise<void> {
    const stack = createContext();
    const status = await part.status(stack);
    if (!status.ours || !(part.usedHere?.(status) ?? true)) {
      const reason = `skipped: ${name} at ${status.endpoint} is not run by this checkout's stack (${status.note ?? status.state}); a restart would hit someone else's`;
      console.log(`CHAOS ${name} restart ${reason}`);
      ctx.skip(reason);
      return;
    }
    const p = await start();
    p.spawn('projector-pg');
    p.spawn('projector-ch');
    p.spawn('frontier');
    p.spawn('worker');
    p.spawn('worker');
    const jobId = await dispatchJob(p, site, { hostDelayMs: 300, hostConcurrency: 2 });
    await waitPages(p, jobId, 10);
    const beforeStop = await pagesInLog(p, jobId)();
    const stoppedAt = Date.now();
    const down = await withStackLock(stack.runDir, () => part.down(stack));
    expect(down.action).toBe('stopped');
    await sleep(downMs);
    const up = await withStackLock(stack.runDir, () => part.up(stack));
    expect(up.action).toBe('started');
    const restartedAt = Date.now();
    const progress = timeToProgress(pagesInLog(p, jobId), 300_000, beforeStop);
    await waitCompleted(p, jobId, 480_000);
    const completedMs = Date.now() - restartedAt;
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restartedAt, timeoutMs: 300_000 });
    expectAllAlive(p);
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report(`${name} restart`, {
      downMs: restartedAt - stoppedAt, firstProgressMs: await progress, restartToCompletedMs: completedMs, readModelsEqualLogMs: rm.caughtUpMs,
      ...figures, lostRows: rm.lostRows, replay,
    });
  }

  it('h. Kafka broker restarted mid-crawl (the stack\'s own stop/start): every app reconnects, the job completes exactly', async (ctx) => {
    const logger = stackLogger();
    await restartMidCrawl(
      ctx,
      'h Kafka broker',
      // Only a broker this checkout's stack runs and the pipeline uses: a restart would hit someone else's Kafka.
      { status: (s) => kafkaStatus(s, logger), down: kafkaDown, up: (s) => kafkaUp(s, logger), usedHere: (status) => endpoints().kafkaBrokers.join(',') === status.endpoint },
      5_000,
    );
  });

  it('m. Postgres restarted for real mid-crawl (the stack\'s own stop/start): frontier and projector reconnect, the job completes exactly', async (ctx) => {
    await restartMidCrawl(ctx, 'm Postgres', { status: postgresStatus, down: postgresDown, up: (s) => postgresUp(s, loadCredentials(s.home, s.env)) }, 10_000);
  });

  it('n. ClickHouse restarted for real mid-crawl (the stack\'s own stop/start): projector-ch catches up, facts equal the log', async (ctx) => {
    await restartMidCrawl(ctx, 'n ClickHouse', { status: clickhouseStatus, down: clickhouseDown, up: (s) => clickhouseUp(s, loadCredentials(s.home, s.env)) }, 10_000);
  });

  it(`k. schema registry answering 404 for ${OUTAGE_MS / 1000} s (an HTTP proxy under every app; consumers restarted into it with cold caches): nothing dead-lettered, the job completes after it recovers`, async () => {
    const p = await start();
    httpProxy = await startHttpProxy(endpoints().schemaRegistryUrl);
    const env = { SCHEMA_REGISTRY_URL: httpProxy.url };
    const children = new Map((['projector-pg', 'projector-ch', 'frontier', 'worker'] as const).map((app) => [app, p.spawn(app, env)]));
    p.spawn('worker', env);
    const jobId = await dispatchJob(p, site, { hostDelayMs: 300, hostConcurrency: 2 });
    await waitPages(p, jobId, 10);
    await expect.poll(async () => (await pgState(p, jobId))?.page_rows ?? 0, { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(5);
    // The registry answers 404 for everything (restored empty, a wrong path, a proxy mid-deploy).
    // Processes started now know no schema: every event they read, and every one they write, needs it.
    httpProxy.mode = 'not-found';
    const cutAt = Date.now();
    const atCut = await pagesInLog(p, jobId)();
    for (const [app, child] of children) {
      await p.kill(child);
      p.spawn(app, env);
    }
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - cutAt)));
    const atRestore = await pagesInLog(p, jobId)();
    const notFound = httpProxy.notFound;
    httpProxy.mode = 'pass';
    const restoredAt = Date.now();
    await waitCompleted(p, jobId);
    const completedMs = Date.now() - restoredAt;
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restoredAt });
    expectAllAlive(p);
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    expect(notFound).toBeGreaterThan(0);
    // The site's traps fail for good (their FetchRequested in the fetch DLQ, as exhausted or non-retriable);
    // nothing may be there as undecodable, and no event at all in the events' DLQ.
    const dead = await readTopics(p.kafka, [`${p.prefix}trawl.events.dlq`, p.topics.fetchDlq]);
    const deadLetters = dead.filter((m) => m.topic !== p.topics.fetchDlq || !['exhausted', 'non-retriable'].includes(String(m.headers['trawl-dead-letter-reason']))).length;
    expect(deadLetters).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report('k schema registry answering 404', {
      outageMs: OUTAGE_MS, registryAnswers404: notFound, pagesProducedDuringOutage: atRestore - atCut, deadLetters,
      restoreToCompletedMs: completedMs, readModelsEqualLogMs: rm.caughtUpMs, ...figures, lostRows: rm.lostRows, replay,
    });
  });
});
