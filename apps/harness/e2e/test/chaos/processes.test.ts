/**
 * Chaos, part 1 (cheap: runs in the normal `npm test` of apps/harness/e2e and in `npm run test:chaos`):
 * SIGKILL of projector-pg, projector-ch, the dispatcher mid-dispatch, the API under a WebSocket
 * client, a worker while a fetch holds its commits back, and the frontier, each in the middle of a
 * real crawl. After each: the exact page set, JobCompleted once, the Postgres read models and
 * ClickHouse facts/rollups equal to the event log, and both read models replayed from that log
 * beside the live ones to equal checksums.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { WebSocket } from 'ws';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { PageFetched } from '@trawl/schemas';
import type { JobDispatched, TargetDue } from '@trawl/schemas';
import { CONFIG_MIGRATIONS, crawlSpec, createSchedule, migrate, upsertTarget, upsertWebsite } from '@trawl/store';
import { readEvents } from '@trawl/streams';
import type { ClickHouse } from '@trawl/projector-ch';
import { Pipeline } from '../../src/pipeline.ts';
import { freePort } from '../../src/api-pipeline.ts';
import {
  RETRY_ENV, SITE_OPTIONS, clickhouseOf, count, crawlOutcome, dispatchJob, expectExactCrawl, expectReadModelsEqualLog, expectReplaysEqualLive, groupLag, logFigures,
  named, pgState, report, sleep, timeToProgress, waitCompleted, waitPages,
} from './support.ts';

let site: TestSite;
let pipeline: Pipeline | undefined;
let ch: ClickHouse | undefined;

beforeAll(async () => {
  site = await createTestSite(SITE_OPTIONS);
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await ch?.close();
  ch = undefined;
  await pipeline?.stop();
  pipeline = undefined;
  site.reset();
});

async function start(env: Readonly<Record<string, string>> = RETRY_ENV): Promise<Pipeline> {
  pipeline = await Pipeline.start({ env });
  ch = clickhouseOf(pipeline);
  return pipeline;
}

/** Stored positions of projector-pg (stream_offsets) and projector-ch (max offset + 1 of its facts). */
const pgStored = (p: Pipeline) => async (topic: string, partition: number) => {
  const { rows } = await p.db.pool.query<{ n: string }>('SELECT max(next_offset)::text AS n FROM stream_offsets WHERE topic = $1 AND partition = $2', [topic, partition]).catch(() => ({ rows: [] as { n: string }[] }));
  return rows[0]?.n ? BigInt(rows[0].n) : undefined;
};
const chStored = (p: Pipeline, c: ClickHouse) => async (topic: string, partition: number) => {
  const table = topic === p.topics.jobs ? 'job_events' : topic === p.topics.pages ? 'page_fetches' : 'items';
  const rows = await c.rows<{ n: string }>(`SELECT toString(max(_offset) + 1) AS n FROM ${table} WHERE _partition = ${partition}`).catch(() => []);
  return rows[0] && rows[0].n !== '0' ? BigInt(rows[0].n) : undefined;
};
const pgPages = (p: Pipeline, jobId: string) => async () => (await pgState(p, jobId))?.page_rows ?? 0;
const chPages = (c: ClickHouse, jobId: string) => async () => Number((await c.rows<{ n: string }>(`SELECT count() AS n FROM page_fetches WHERE job_id = '${jobId}'`))[0]?.n ?? 0);

describe('chaos: processes killed mid-crawl', () => {
  it('a. projector-pg SIGKILLed mid-crawl and restarted: read models equal the log, nothing lost', async () => {
    const p = await start();
    const victim = p.spawn('projector-pg');
    p.spawn('projector-ch');
    p.spawn('frontier');
    p.spawn('worker');
    p.spawn('worker');
    const jobId = await dispatchJob(p, site, { hostDelayMs: 150, hostConcurrency: 2 });
    await expect.poll(pgPages(p, jobId), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(10);
    const lag = await groupLag(p, 'trawl-projection-pg', pgStored(p));
    await p.kill(victim);
    const rowsAtKill = await pgPages(p, jobId)();
    await sleep(3_000); // the crawl goes on without it
    p.spawn('projector-pg');
    const restartedAt = Date.now();
    const progress = timeToProgress(pgPages(p, jobId));
    await waitCompleted(p, jobId);
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restartedAt });
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    expect(rm.lostRows).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report('a projector-pg SIGKILL', {
      rowsAtKill, firstProgressMs: await progress, readModelsEqualLogMs: rm.caughtUpMs,
      appliedButNotCommittedToKafkaAtKill: lag.storedNotCommitted, ...figures, lostRows: rm.lostRows, replay,
    });
  });

  it('b. projector-ch SIGKILLed mid-crawl and restarted: facts and rollups equal the log and Postgres', async () => {
    const p = await start();
    p.spawn('projector-pg');
    const victim = p.spawn('projector-ch');
    p.spawn('frontier');
    p.spawn('worker');
    p.spawn('worker');
    const jobId = await dispatchJob(p, site, { hostDelayMs: 150, hostConcurrency: 2 });
    await expect.poll(chPages(ch!, jobId), { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(10);
    await p.kill(victim);
    // Facts stored but not yet committed to the Kafka group: redelivered to the next process, skipped by position.
    const lag = await groupLag(p, 'trawl-projection-ch', chStored(p, ch!)).catch(() => ({ group: null, storedNotCommitted: -1 }));
    const rowsAtKill = await chPages(ch!, jobId)();
    await sleep(3_000);
    p.spawn('projector-ch');
    const restartedAt = Date.now();
    const progress = timeToProgress(chPages(ch!, jobId));
    await waitCompleted(p, jobId);
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restartedAt });
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report('b projector-ch SIGKILL', {
      rowsAtKill, firstProgressMs: await progress, readModelsEqualLogMs: rm.caughtUpMs,
      group: lag.group, redeliveredToNewProcess: lag.storedNotCommitted, ...figures, lostRows: rm.lostRows, replay,
    });
  });

  it('c. dispatcher SIGKILLed mid-dispatch (events produced, schedule not advanced): the slot dispatches exactly one job, which completes exactly', async () => {
    const p = await start();
    p.spawn('projector-pg');
    p.spawn('projector-ch');
    p.spawn('frontier');
    p.spawn('worker');
    p.spawn('worker');
    const pool = p.db.pool;
    await migrate(pool, 'config', CONFIG_MIGRATIONS);
    const website = await upsertWebsite(pool, {
      ...crawlSpec(null),
      ...site.spec,
      id: 'chaos-site', owner_id: 'chaos', name: 'Chaos test site', base_url: site.origin,
      next_link_selector: null, page_param: null, host_concurrency: 8, host_delay_ms: 0, max_depth: 3, max_pages: 10_000,
    });
    await upsertTarget(pool, { id: 'chaos-target', owner_id: 'chaos', website_id: website.id, name: null, url_template: site.home, keywords: [], location: null, active: true });
    // The fault window, made deterministic: the dispatcher's "advance the schedule" UPDATE waits for
    // an advisory lock this test holds, i.e. after its events are acknowledged and before its commit.
    await pool.query(`CREATE FUNCTION chaos_hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock_shared(424242); RETURN NEW; END $$`);
    await pool.query(`CREATE TRIGGER chaos_hold BEFORE UPDATE ON schedules FOR EACH ROW WHEN (NEW.last_job_id IS DISTINCT FROM OLD.last_job_id) EXECUTE FUNCTION chaos_hold()`);
    const holder = new pg.Client({ connectionString: p.db.url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock(424242)');
    const schedule = await createSchedule(pool, { id: 'chaos-once', owner_id: 'chaos', target_id: 'chaos-target', cadence: { runAt: new Date(Date.now() + 2_000) } });
    const scheduleEvents = async () => (await readEvents(p.kafka, p.codec, [p.topics.jobs, p.topics.schedule]))
      .filter((e) => (e.event.value as { schedule_id?: string | null }).schedule_id === schedule.id);

    const victim = p.spawn('dispatcher');
    await expect.poll(async () => (await scheduleEvents()).filter((e) => e.event.name === 'JobDispatched').length, { timeout: 120_000, interval: 250 }).toBeGreaterThanOrEqual(1);
    // Mid-dispatch: the events are in the log, the schedule has not moved on.
    expect((await pool.query('SELECT last_job_id FROM schedules WHERE id = $1', [schedule.id])).rows[0].last_job_id).toBeNull();
    await p.kill(victim);
    await holder.query('SELECT pg_advisory_unlock(424242)');
    await holder.end();
    await pool.query('DROP TRIGGER chaos_hold ON schedules');
    expect((await pool.query('SELECT last_job_id FROM schedules WHERE id = $1', [schedule.id])).rows[0].last_job_id).toBeNull();
    p.spawn('dispatcher');
    const restartedAt = Date.now();
    await expect.poll(async () => (await pool.query('SELECT last_job_id FROM schedules WHERE id = $1', [schedule.id])).rows[0].last_job_id, { timeout: 120_000, interval: 250 }).not.toBeNull();
    const redispatchedMs = Date.now() - restartedAt;

    const events = await scheduleEvents();
    const dispatched = named(events, 'JobDispatched') as JobDispatched[];
    const due = named(events, 'TargetDue') as TargetDue[];
    // Exactly one job for the slot: the second tick re-sent the same ids.
    expect(new Set(dispatched.map((d) => d.job_id)).size).toBe(1);
    expect(new Set(dispatched.map((d) => d.event_id)).size).toBe(1);
    expect(new Set(due.map((d) => d.event_id)).size).toBe(1);
    expect(dispatched.length).toBeGreaterThanOrEqual(2);
    const jobId = dispatched[0]!.job_id;
    expect((await pool.query('SELECT last_job_id, next_due, status FROM schedules WHERE id = $1', [schedule.id])).rows[0]).toMatchObject({ last_job_id: jobId, next_due: null, status: 'done' });

    await waitCompleted(p, jobId);
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch! });
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    // Let the restarted dispatcher tick a few more times: still one job.
    await sleep(3_000);
    expect(new Set(named(await scheduleEvents(), 'JobDispatched').map((d) => d.job_id)).size).toBe(1);
    const replay = await expectReplaysEqualLive(p);
    report('c dispatcher SIGKILL mid-dispatch', {
      restartToScheduleAdvancedMs: redispatchedMs, jobDispatchedRecords: dispatched.length, targetDueRecords: due.length, distinctJobs: 1,
      ...figures, lostRows: rm.lostRows, replay,
    });
  });

  it('d. API SIGKILLed under a WebSocket client: the client reconnects to a new API and gets the job through to completion, the gap filled from the job log', async () => {
    const p = await start();
    const port = await freePort();
    const apiEnv = { TRAWL_API_HOST: '127.0.0.1', TRAWL_API_PORT: String(port) };
    p.spawn('projector-pg');
    p.spawn('projector-ch');
    const api = p.spawn('api', apiEnv);
    p.spawn('frontier');
    p.spawn('worker');
    p.spawn('worker');
    const base = `http://127.0.0.1:${port}`;
    const up = async () => (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok).catch(() => false));
    await expect.poll(up, { timeout: 120_000, interval: 250 }).toBe(true);
    const key = await p.createKey('chaos-user');

    interface Msg { type: string; event?: string; job_id?: string; data?: { event_id: string } }
    const received: { msg: Msg; connection: number }[] = [];
    let connection = 0;
    const connect = () => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/events`, { headers: { authorization: `Bearer ${key}` } });
      let n = 0; // the successful connection this socket is (1, 2): set by its hello
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as Msg;
        if (msg.type === 'hello') n = ++connection;
        received.push({ msg, connection: n });
        if (msg.type === 'hello') resolve(ws);
      });
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    const connectRetrying = async (timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          return await connect();
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await sleep(250);
        }
      }
    };
    let ws = await connectRetrying(60_000);
    await sleep(2_000); // the live group starts at "latest" a moment after joining

    // One page a second (~60 s for the site's ~60 fetches): after the kill at page 5 there are ~50 s of
    // crawl left, room for a new API to boot and its feed to go live on however slow a machine.
    const jobId = await dispatchJob(p, site, { userId: 'chaos-user', hostDelayMs: 1_000, hostConcurrency: 1 });
    const feed = (conn?: number) => received.filter((r) => r.msg.type === 'event' && r.msg.job_id === jobId && (conn === undefined || r.connection === conn)).map((r) => r.msg);
    await expect.poll(() => feed(1).filter((m) => m.event === 'PageFetched').length, { timeout: 120_000, interval: 100 }).toBeGreaterThanOrEqual(5);

    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    await p.kill(api);
    const killedAt = Date.now();
    await closed;
    p.spawn('api', apiEnv);
    ws = await connectRetrying(120_000);
    const reconnectedMs = Date.now() - killedAt;
    await waitCompleted(p, jobId);
    await expect.poll(() => feed(2).some((m) => m.event === 'JobCompleted'), { timeout: 60_000, interval: 100 }).toBe(true);
    ws.close();

    // Gap handling: the live feed starts "about now" on the new process, so the events between the
    // kill and the new subscription are read back from the job's log (SSE, history then end).
    const sse = await fetch(`${base}/jobs/${jobId}/logs`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(60_000) }).then((r) => r.text());
    const logged = sse.split('\n\n').filter((block) => block.includes('event: log')).map((block) => JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as { event: string; event_id: string });
    expect(sse).toContain('event: end');

    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch! });
    const feedNames = new Set(['CrawlRequested', 'JobDispatched', 'JobCompleted', 'JobFailed', 'JobCancelled', 'PageFetched', 'PageFailed']);
    const inLog = new Set(o.events.filter((e) => feedNames.has(e.event.name)).map((e) => (e.event.value as { event_id: string }).event_id));
    const live = new Set([...feed(1), ...feed(2)].map((m) => m.data!.event_id));
    const backfilled = new Set(logged.filter((l) => feedNames.has(l.event)).map((l) => l.event_id));
    // The feed never shows an event that is not in the log; live ∪ backfill = the log, exactly.
    expect([...live].filter((id) => !inLog.has(id))).toEqual([]);
    expect([...new Set([...live, ...backfilled])].sort()).toEqual([...inLog].sort());
    expect(feed(2).filter((m) => m.event === 'PageFetched' || m.event === 'PageFailed').length).toBeGreaterThan(0);
    const gap = [...inLog].filter((id) => !live.has(id)).length;
    const replay = await expectReplaysEqualLive(p);
    report('d API SIGKILL under a WebSocket client', {
      reconnectedMs, beforeKill: feed(1).length, afterReconnect: feed(2).length, gapFilledFromLog: gap, liveDuplicates: feed(1).length + feed(2).length - live.size,
      feedEventsInLog: inLog.size, lost: [...inLog].filter((id) => !live.has(id) && !backfilled.has(id)).length, pagesInLog: count(o.events, jobId, 'PageFetched', 'PageFailed'), lostRows: rm.lostRows, replay,
    });
  });

  it('i. worker SIGKILLed while a slow fetch holds its commits back: the fetches after it run again, their PageFetched re-emitted later; nothing lost, and both read models replay to the live ones', async () => {
    // The slow page answers long after the fetch timeout: while its fetch is in flight, the worker
    // cannot commit its partition past it, so every page fetched meanwhile is produced but not
    // committed. Killed then, the worker leaves those to its successor, which fetches them again.
    const slow = await createTestSite({ ...SITE_OPTIONS, slowMs: 20_000 });
    try {
      const fetchTimeoutMs = 5_000;
      const p = await start({ ...RETRY_ENV, TRAWL_FETCH_TIMEOUT_MS: String(fetchTimeoutMs) });
      p.spawn('projector-pg');
      p.spawn('projector-ch');
      p.spawn('frontier');
      const victim = p.spawn('worker');
      const jobId = await dispatchJob(p, slow);
      const slowPath = new URL(slow.traps.slow).pathname;
      await expect.poll(() => slow.accessLog.count(slowPath), { timeout: 120_000, interval: 50 }).toBeGreaterThan(0);
      const slowSince = slow.accessLog.entries().find((e) => e.path === slowPath)!.time;
      // Kill once a page requested after the slow one is in the log, while the slow fetch still runs.
      const held = async () => {
        const events = await readEvents(p.kafka, p.codec, [p.topics.fetch, p.topics.pages]);
        const requests = events.filter((e) => e.event.name === 'FetchRequested');
        const slowRequest = requests.find((e) => new URL((e.event.value as { url: string }).url).pathname === slowPath);
        if (!slowRequest) return 0;
        const after = new Set(requests.filter((e) => e.partition === slowRequest.partition && BigInt(e.offset) > BigInt(slowRequest.offset)).map((e) => (e.event.value as { fetch_id: string }).fetch_id));
        return events.filter((e) => e.event.name === 'PageFetched' && after.has((e.event.value as PageFetched).fetch_id)).length;
      };
      await expect.poll(held, { timeout: fetchTimeoutMs - 1_000, interval: 100, message: 'a page requested after the slow one, fetched while the slow fetch still runs' }).toBeGreaterThan(0);
      const heldAtKill = await held();
      await p.kill(victim);
      const killedMs = Date.now() - slowSince;
      expect(killedMs).toBeLessThan(fetchTimeoutMs); // the slow fetch was still in flight
      p.spawn('worker');
      await waitCompleted(p, jobId);
      const o = await crawlOutcome(p, jobId);
      expectExactCrawl(slow, o);
      // The log holds the reported shape: PageFetched copies, same id, another offset, a later time.
      const first = new Map<string, PageFetched>();
      let reemitted = 0;
      for (const e of o.events.filter((x) => x.event.name === 'PageFetched')) {
        const v = e.event.value as PageFetched;
        const before = first.get(v.event_id);
        if (!before) first.set(v.event_id, v);
        else if (v.occurred_at > before.occurred_at) reemitted++;
      }
      expect(reemitted).toBeGreaterThan(0);
      const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch! });
      const figures = logFigures(slow, o);
      expect(figures.lostPages).toBe(0);
      const replay = await expectReplaysEqualLive(p);
      report('i worker SIGKILL with commits held back', { killedMsAfterSlowFetchBegan: killedMs, pagesProducedNotCommittedAtKill: heldAtKill, pageFetchedReemittedLater: reemitted, ...figures, lostRows: rm.lostRows, replay });
    } finally {
      await slow.close();
    }
  });

  it('j. frontier SIGKILLed mid-crawl and restarted: the job completes with the full set, JobCompleted once, and both read models replay to the live ones', async () => {
    const p = await start();
    p.spawn('projector-pg');
    p.spawn('projector-ch');
    const frontier = p.spawn('frontier');
    p.spawn('worker');
    p.spawn('worker');
    const jobId = await dispatchJob(p, site, { hostDelayMs: 150, hostConcurrency: 2 });
    await waitPages(p, jobId, 10);
    await p.kill(frontier);
    p.spawn('frontier');
    const restartedAt = Date.now();
    await waitCompleted(p, jobId);
    const o = await crawlOutcome(p, jobId);
    expectExactCrawl(site, o);
    const rm = await expectReadModelsEqualLog(p, jobId, { ch: ch!, since: restartedAt });
    const figures = logFigures(site, o);
    expect(figures.lostPages).toBe(0);
    const replay = await expectReplaysEqualLive(p);
    report('j frontier SIGKILL', { restartToReadModelsEqualLogMs: rm.caughtUpMs, ...figures, lostRows: rm.lostRows, replay });
  });
});
