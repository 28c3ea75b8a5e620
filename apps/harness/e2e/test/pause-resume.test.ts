/**
 * Pause and resume of a large job, end to end (issue 24, item 3), with the frontier SIGKILLed
 * while the job is paused: API, projector-pg, frontier and a worker as processes on the real stack,
 * crawling the generated test site (TRAWL_E2E_PAUSE_PAGES pages, 5,000 by default).
 *
 * The job is paused through `POST /jobs/:id/pause` early in its crawl. From the moment the frontier
 * has applied the pause (its `frontier_jobs.paused`), no FetchRequested may be produced: the fetch
 * topic's end does not move. The fetches requested before it still finish (every FetchRequested
 * gets its outcome in the log) and the links they bring are queued in the frontier's rows. The
 * frontier is SIGKILLed right after it applied the pause, while those fetches are still in flight,
 * so a new process applies their outcomes from the stored state; the pause then lasts past the
 * fetch deadline, and nothing is declared lost. `POST /jobs/:id/resume` requests exactly the queue
 * (FetchRequested caused by the JobResumed), and the job completes with the site's exact page set:
 * every URL requested once under one fetch id, served once by the site (a retry being the only
 * repeat), JobCompleted once with the right counters. projector-ch, running beside them, gives
 * the job a run time with the pause left out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { FetchRequested, JobCompleted, JobDispatched, JobPaused, JobResumed, PageFailed, PageFetched } from '@trawl/schemas';
import { readEvents, readProjectionOffsets, watermarks } from '@trawl/streams';
import { jobRunTimes, type ClickHouse } from '@trawl/projector-ch';
import type { Pipeline } from '../src/pipeline.ts';
import { startApiPipeline } from '../src/api-pipeline.ts';
import { clickhouseOf, sleep } from './chaos/support.ts';

/** Pages of the site; the test of record runs 5,000. */
const PAGES = Number(process.env.TRAWL_E2E_PAUSE_PAGES ?? 5_000);
const LINKS_PER_PAGE = 4;
/** Pages fetched before the pause is asked for: early, so that most of the site is still to come. */
const PAUSE_AFTER = Math.max(20, Math.floor(PAGES / 100));
/**
 * How late each page answers until the pause is applied. The frontier requests a page's links as
 * soon as it is fetched, so at full speed most of the site would be requested by the time the
 * pause lands; slowed down, the pause comes with most of it still to discover.
 */
const LATENCY_BEFORE_PAUSE_MS = 200;
// A deadline the paused job outlives: the retry path it must exceed is 1.8 s of tiers + 4 × 8 s.
const DEADLINE_MS = 45_000;
const ENV = { TRAWL_FETCH_RETRY_DELAYS_MS: '300,600,900', TRAWL_FETCH_TIMEOUT_MS: '8000', TRAWL_FETCH_DEADLINE: `${DEADLINE_MS}ms` };

/** The depth at which the tree of `pages` pages with `k` children each ends. */
function treeDepth(pages: number, k: number): number {
  let depth = 0;
  for (let last = 0, width = 1; last < pages - 1; depth++) {
    width *= k;
    last += width;
  }
  return depth;
}
const DEPTH = treeDepth(PAGES, LINKS_PER_PAGE);

let site: TestSite;
let pipeline: Pipeline | undefined;
let ch: ClickHouse | undefined;

beforeAll(async () => {
  site = await createTestSite({ pages: PAGES, linksPerPage: LINKS_PER_PAGE, itemsPerPage: 1, traps: false });
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await ch?.close();
  ch = undefined;
  await pipeline?.stop();
  pipeline = undefined;
});

/** Polls `probe` until it returns a value `done` accepts. */
async function until<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, what: string, p: Pipeline): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (done(v)) return v;
    p.checkChildren();
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(v)})`);
    await sleep(250);
  }
}

interface FrontierJob {
  readonly paused: boolean;
  readonly status: string;
  readonly fetched: number;
  /** Requested, not yet done, not queued: in flight. */
  readonly inFlight: number;
  readonly queued: number;
}

async function frontierJob(p: Pipeline, jobId: string): Promise<FrontierJob | null> {
  const { rows } = await p.db.pool
    .query<{ paused: boolean; status: string; fetched: number; in_flight: number; queued: number }>(
      `SELECT j.paused, j.status, (j.counters->>'pages_fetched')::int AS fetched,
         (SELECT count(*)::int FROM frontier_urls u WHERE u.job_id = j.job_id AND NOT u.done AND NOT u.queued) AS in_flight,
         (SELECT count(*)::int FROM frontier_urls u WHERE u.job_id = j.job_id AND u.queued) AS queued
       FROM frontier_jobs j WHERE j.job_id = $1`,
      [jobId],
    )
    .catch(() => ({ rows: [] }));
  const r = rows[0];
  return r ? { paused: r.paused, status: r.status, fetched: r.fetched, inFlight: r.in_flight, queued: r.queued } : null;
}

/** FetchRequested records in the fetch topic (the pipeline runs one job, and only the frontier writes there). */
async function fetchRecords(p: Pipeline): Promise<bigint> {
  return (await watermarks(p.kafka, [p.topics.fetch])).reduce((n, w) => n + w.high, 0n);
}

/** Whether the frontier has applied every event in the jobs and pages topics. */
async function frontierCaughtUp(p: Pipeline): Promise<boolean> {
  const ends = await watermarks(p.kafka, [p.topics.jobs, p.topics.pages]);
  const applied = new Map((await readProjectionOffsets(p.db.pool, 'frontier')).map((o) => [`${o.topic}:${o.partition}`, o.nextOffset]));
  return ends.every((w) => (applied.get(`${w.topic}:${w.partition}`) ?? 0n) >= w.high);
}

describe('pause and resume', () => {
  it(`a ${PAGES}-page job paused, its frontier SIGKILLed while paused, resumed: nothing requested while paused, in-flight fetches finish, the exact page set once`, async () => {
    const t0 = Date.now();
    // Fetches are keyed by host: the site's one host is one partition, which one worker takes.
    const started = await startApiPipeline({ env: ENV, users: ['pause-user'], projectorCh: true });
    const p = (pipeline = started.pipeline);
    const { api } = started;
    let { frontier } = started;
    ch = clickhouseOf(p);

    site.setLatency(LATENCY_BEFORE_PAUSE_MS);
    const crawl = await api('POST', '/crawl', { start_urls: [site.home], depth: DEPTH, max_pages: PAGES * 2 });
    expect(crawl.status).toBe(200);
    const jobId = crawl.body.job_id as string;
    const startedAt = Date.now();

    // Pause early, then wait for the frontier to have applied it.
    await until(() => frontierJob(p, jobId), (j) => (j?.fetched ?? 0) >= PAUSE_AFTER, 180_000, `${PAUSE_AFTER} pages fetched`, p);
    // The API acts on the read model, which must show the job running first.
    await until(() => api('GET', `/jobs/${jobId}/status`), (r) => r.body.status === 'running', 60_000, 'the job running in the read model', p);
    const paused = await api('POST', `/jobs/${jobId}/pause`);
    expect(paused).toEqual({ status: 202, body: { job_id: jobId, status: 'pausing' } });
    const pausedAt = Date.now();
    const atPause = await until(() => frontierJob(p, jobId), (j) => j?.paused === true, 60_000, 'the frontier to apply the pause', p);
    // From here on the fetch topic's end must never move until the resume.
    const requestedAtPause = await fetchRecords(p);
    const pauseAppliedMs = Date.now() - pausedAt;
    site.setLatency(0);

    // SIGKILL the frontier while the fetches requested before the pause are still in flight; a
    // new process applies their outcomes from the stored state.
    const inFlightAtKill = (await frontierJob(p, jobId))!.inFlight;
    await p.kill(frontier);
    const killedAt = Date.now();
    frontier = p.spawn('frontier');
    // In-flight fetches finish: the new frontier has applied every outcome in the log, and none is outstanding.
    const quiet = await until(
      async () => ({ job: await frontierJob(p, jobId), caughtUp: await frontierCaughtUp(p) }),
      // A job that ends instead (requests went on despite the pause) fails the checks below at once.
      (s) => s.job?.status !== 'running' || (s.caughtUp && s.job.inFlight === 0),
      180_000,
      'the fetches in flight at the pause to finish, applied by the new frontier',
      p,
    );
    const restartToQuietMs = Date.now() - killedAt;
    expect(quiet.job!.paused).toBe(true);
    expect(quiet.job!.status).toBe('running');
    expect(quiet.job!.queued).toBeGreaterThan(0);
    const quietAt = Date.now();
    const servedAtQuiet = site.accessLog.entries().length;

    // Hold the pause past the fetch deadline: a paused job is not judged.
    await sleep(Math.max(5_000, DEADLINE_MS + 5_000 - (Date.now() - pausedAt)));
    const held = await frontierJob(p, jobId);
    expect(held).toMatchObject({ paused: true, status: 'running', inFlight: 0, queued: quiet.job!.queued });
    expect(await fetchRecords(p)).toBe(requestedAtPause);
    // Nothing reached the site while the job had nothing in flight.
    expect(site.accessLog.entries().slice(servedAtQuiet).map((e) => e.path)).toEqual([]);
    const pausedLog = await readEvents(p.kafka, p.codec, [p.topics.fetch, p.topics.pages]);
    const requestedWhilePaused = pausedLog.filter((e) => e.event.name === 'FetchRequested').map((e) => e.event.value as FetchRequested);
    const endedWhilePaused = new Set(pausedLog.filter((e) => e.event.name === 'PageFetched' || e.event.name === 'PageFailed').map((e) => (e.event.value as PageFetched).fetch_id));
    expect(requestedWhilePaused.filter((r) => !endedWhilePaused.has(r.fetch_id)).map((r) => r.url)).toEqual([]);
    expect(pausedLog.filter((e) => e.event.name === 'PageFailed').map((e) => (e.event.value as PageFailed).error_code)).toEqual([]);
    const queuedUrls = (await p.db.pool.query<{ url: string }>('SELECT url FROM frontier_urls WHERE job_id = $1 AND queued ORDER BY url', [jobId])).rows.map((r) => r.url);
    expect((await api('GET', `/jobs/${jobId}/status`)).body.status).toBe('paused');
    const pausedForMs = Date.now() - pausedAt;

    const resumed = await api('POST', `/jobs/${jobId}/resume`);
    expect(resumed).toEqual({ status: 202, body: { job_id: jobId, status: 'resuming' } });
    const resumedAt = Date.now();
    // Polled in the frontier's rows: reading the whole log every moment would slow the crawl down.
    await until(() => frontierJob(p, jobId), (j) => j?.status !== 'running', 600_000, `the frontier to complete ${jobId}`, p);
    const resumeToCompletedMs = Date.now() - resumedAt;

    const log = (await readEvents(p.kafka, p.codec, [p.topics.jobs, p.topics.pages, p.topics.fetch])).filter((e) => (e.event.value as { job_id?: string }).job_id === jobId);
    const of = <T>(name: string) => log.filter((e) => e.event.name === name).map((e) => e.event.value as T);
    const requested = of<FetchRequested>('FetchRequested');
    const fetched = of<PageFetched>('PageFetched');
    const failed = of<PageFailed>('PageFailed');
    const completed = of<JobCompleted>('JobCompleted');
    const resume = of<JobResumed>('JobResumed');
    const expected = site.expected(DEPTH);
    expect(expected.requested).toHaveLength(PAGES);

    // The resume requested exactly the queue, caused by the JobResumed.
    expect(resume).toHaveLength(1);
    expect(requested.filter((r) => r.causation_id === resume[0]!.event_id).map((r) => r.url).sort()).toEqual(queuedUrls);
    // Every URL of the site requested once, under one fetch id, and fetched; nothing failed or lost.
    const urls = (xs: readonly { url: string }[]) => [...new Set(xs.map((x) => x.url))].sort();
    expect(urls(requested)).toEqual([...expected.requested].sort());
    expect(new Set(requested.map((r) => r.fetch_id)).size).toBe(PAGES);
    expect(new Set(requested.map((r) => r.event_id)).size).toBe(PAGES);
    expect(urls(fetched)).toEqual([...expected.fetched].sort());
    expect(failed).toEqual([]);
    // JobCompleted once, with the counters of the whole site.
    expect(new Set(completed.map((c) => c.event_id)).size).toBe(1);
    expect(completed[0]).toMatchObject({ outcome: 'finished', pages_fetched: PAGES, pages_failed: 0, urls_seen: PAGES, items_extracted: 0 });
    // The site served each page once; a repeat only where the worker retried.
    const retried = new Set(fetched.filter((f) => f.attempt > 1).map((f) => new URL(f.url).pathname + new URL(f.url).search));
    const repeats = [...site.accessLog.duplicates().keys()].filter((path) => path !== '/robots.txt' && !retried.has(path));
    expect(repeats).toEqual([]);
    for (const url of expected.fetched) expect(site.accessLog.count(new URL(url).pathname + new URL(url).search), url).toBeGreaterThanOrEqual(1);
    await until(() => api('GET', `/jobs/${jobId}/status`), (r) => r.body.status === 'finished', 120_000, 'the read model to show the job finished', p);
    // The analytics' run time of the job leaves the pause out (whole seconds, as ClickHouse keeps them).
    const seconds = (d: Date) => Math.floor(d.getTime() / 1_000);
    const [pause] = of<JobPaused>('JobPaused');
    const [dispatched] = of<JobDispatched>('JobDispatched');
    const runTime = await until(async () => (await jobRunTimes(ch!, [jobId]).catch(() => []))[0], (r) => r?.status === 'finished', 120_000, "projector-ch's run time of the job", p);
    const pausedSeconds = seconds(resume[0]!.occurred_at) - seconds(pause!.occurred_at);
    expect(runTime).toEqual({
      job_id: jobId, status: 'finished', started_at: seconds(dispatched!.occurred_at), ended_at: seconds(completed[0]!.occurred_at),
      pauses: 1, paused_seconds: pausedSeconds, active_seconds: seconds(completed[0]!.occurred_at) - seconds(dispatched!.occurred_at) - pausedSeconds,
    });
    expect(pausedSeconds).toBeGreaterThanOrEqual(Math.floor(DEADLINE_MS / 1_000));

    console.log(`PAUSE ${JSON.stringify({
      pages: PAGES, depth: DEPTH, activeSeconds: runTime!.active_seconds, pausedSeconds: runTime!.paused_seconds, fetchedWhenPauseApplied: atPause!.fetched, pauseAppliedMs, inFlightAtKill,
      requestedBeforePause: Number(requestedAtPause), queuedWhilePaused: queuedUrls.length, restartToQuietMs, pausedForMs,
      quietForMs: resumedAt - quietAt, resumeToCompletedMs, crawlMs: Date.now() - startedAt - pausedForMs, retried: retried.size, testMs: Date.now() - t0,
    })}`);
  }, 900_000);
});
