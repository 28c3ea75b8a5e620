/**
 * Shared pieces of the chaos suite (issue "Reliability: faults during a running crawl, with nothing
 * lost"): a crawl of the generated test site on a whole pipeline of child processes, the exact
 * checks that follow every fault (the page set of site.expected, JobCompleted once, Postgres read
 * models and ClickHouse facts/rollups equal to what the event log says), and the figures each
 * scenario prints (recovery time, duplicates absorbed, lost), and the replay that ends every
 * scenario: both read models rebuilt from the log the fault left, beside the live ones, checksums
 * compared (`expectReplaysEqualLive`).
 */
import { createServer } from 'node:net';
import { expect } from 'vitest';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestSite } from '@trawl/demo-site';
import type { EventMap, FetchRequested, JobCompleted, PageFailed, PageFetched } from '@trawl/schemas';
import { endpoints, readEvents, repoRoot, type LoggedEvent } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import { ClickHouse, jobTotals, jobTotalsFromFacts, type JobTotals } from '@trawl/projector-ch';
import type { Pipeline } from '../../src/pipeline.ts';

export const RETRY_ENV = { TRAWL_FETCH_RETRY_DELAYS_MS: '300,600,900', TRAWL_FETCH_TIMEOUT_MS: '1500' } as const;
export const DEPTH = 3;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The site of every chaos crawl: the crawl test's site (traps included), so retries happen too. */
export const SITE_OPTIONS = { pages: 60, linksPerPage: 3, itemsPerPage: 2, traps: true, slowMs: 4_000 } as const;

export interface DispatchOptions {
  readonly userId?: string;
  /** Politeness of the job: a slower crawl leaves room for a fault in its middle. */
  readonly hostDelayMs?: number;
  readonly hostConcurrency?: number;
}

/** A JobDispatched for the site's home, as the API or dispatcher would produce it. */
export async function dispatchJob(p: Pipeline, site: TestSite, o: DispatchOptions = {}): Promise<string> {
  const jobId = randomUUID();
  await p.producer.emit(
    'JobDispatched',
    {
      job_id: jobId,
      user_id: o.userId ?? 'e2e',
      target_id: null,
      schedule_id: null,
      search_url: site.home,
      start_urls: [site.home],
      keywords: [],
      location: null,
      spec: {
        ...crawlSpec(null, { depth: DEPTH, max_pages: 10_000 }),
        ...site.spec,
        ...(o.hostDelayMs !== undefined ? { host_delay_ms: o.hostDelayMs } : {}),
        ...(o.hostConcurrency !== undefined ? { host_concurrency: o.hostConcurrency } : {}),
      },
      attempt: 1,
      params: {},
    },
    { topic: p.topics.jobs },
  );
  return jobId;
}

const jobOf = (e: LoggedEvent) => (e.event.value as { job_id?: string }).job_id;
export const ofJob = (events: readonly LoggedEvent[], jobId: string) => events.filter((e) => jobOf(e) === jobId);
export const named = <N extends keyof EventMap>(events: readonly LoggedEvent[], name: N) => events.filter((e) => e.event.name === name).map((e) => e.event.value as EventMap[N]);
export const count = (events: readonly LoggedEvent[], jobId: string, ...names: string[]) => events.filter((e) => jobOf(e) === jobId && names.includes(e.event.name)).length;

/**
 * Pipeline.waitFor, but a failing read of the log (the broker restarting: "not the leader for that
 * topic-partition") is retried until the deadline instead of failing the test. A child that exits
 * on its own with an error still fails it at once.
 */
export async function waitLog(p: Pipeline, done: (events: LoggedEvent[]) => boolean, timeoutMs: number, what: string): Promise<LoggedEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await p.waitFor(done, Math.max(0, deadline - Date.now()), what);
    } catch (err) {
      const exited = p.children.find((c) => c.process.exitCode !== null && c.process.exitCode !== 0 && !c.process.killed);
      if (exited || Date.now() > deadline) throw err;
      await sleep(1_000);
    }
  }
}

export async function waitCompleted(p: Pipeline, jobId: string, timeoutMs = 240_000): Promise<LoggedEvent[]> {
  return waitLog(p, (events) => events.some((e) => e.event.name === 'JobCompleted' && jobOf(e) === jobId), timeoutMs, `JobCompleted of ${jobId}`);
}

export async function waitPages(p: Pipeline, jobId: string, n: number, timeoutMs = 120_000): Promise<LoggedEvent[]> {
  return waitLog(p, (events) => count(events, jobId, 'PageFetched', 'PageFailed') >= n, timeoutMs, `${n} pages of ${jobId}`);
}

export interface CrawlOutcome {
  readonly requested: FetchRequested[];
  readonly fetched: PageFetched[];
  readonly failed: PageFailed[];
  readonly completed: JobCompleted[];
  readonly events: LoggedEvent[];
}

/** `read`, retried for a minute while it fails (a broker that has just restarted). */
export async function retrying<T>(read: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await read();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(1_000);
    }
  }
}

export async function crawlOutcome(p: Pipeline, jobId: string): Promise<CrawlOutcome> {
  const all = await retrying(() => readEvents(p.kafka, p.codec, [p.topics.jobs, p.topics.pages, p.topics.items, p.topics.fetch]));
  return outcomeOf(all, jobId, p.topics.fetch);
}

/** crawlOutcome from events already read (the soak reads the log once for all its jobs). */
export function outcomeOf(all: readonly LoggedEvent[], jobId: string, fetchTopic: string): CrawlOutcome {
  const mine = ofJob(all, jobId);
  return {
    requested: named(mine, 'FetchRequested'),
    fetched: named(mine, 'PageFetched'),
    failed: named(mine, 'PageFailed'),
    completed: named(mine, 'JobCompleted'),
    events: mine.filter((e) => e.topic !== fetchTopic),
  };
}

const distinctUrls = (xs: readonly { url: string }[]) => [...new Set(xs.map((x) => x.url))].sort();
const distinct = <T>(xs: readonly T[], key: (x: T) => string) => new Set(xs.map(key)).size;

/** The crawl's exact expectations (as in crawl.test.ts): every expected URL, nothing else, JobCompleted once. */
export function expectExactCrawl(site: Pick<TestSite, 'expected'>, o: CrawlOutcome): void {
  const expected = site.expected(DEPTH);
  expect(distinctUrls(o.requested)).toEqual([...expected.requested].sort());
  expect(distinct(o.requested, (r) => r.fetch_id)).toBe(expected.requested.length);
  expect(distinctUrls(o.fetched)).toEqual([...expected.fetched].sort());
  expect(distinctUrls(o.failed)).toEqual([...expected.failed].sort());
  // A URL ends either fetched or failed, never both.
  expect(o.fetched.filter((f) => o.failed.some((x) => x.fetch_id === f.fetch_id))).toEqual([]);
  expect(distinct(o.completed, (c) => c.event_id)).toBe(1);
  const done = o.completed[0]!;
  expect(done.outcome).toBe('finished');
  expect(done.pages_fetched).toBe(expected.fetched.length);
  expect(done.pages_failed).toBe(expected.failed.length);
  expect(done.urls_seen).toBe(expected.requested.length);
  expect(done.items_extracted).toBe(expected.items);
}

/** Duplicates in the log (delivered or produced twice) that the read models must absorb, and what is lost. */
export interface LogFigures {
  readonly pageFetchedRecords: number;
  readonly pageFetchedDistinctEvents: number;
  readonly pageFetchedDistinctFetches: number;
  readonly itemRecords: number;
  readonly itemDistinct: number;
  /** Records of the job's events minus distinct event ids: duplicates absorbed downstream. */
  readonly duplicateRecords: number;
  readonly fetchRequestedRecords: number;
  readonly fetchRequestedDistinct: number;
  /** Expected URLs with no PageFetched/PageFailed in the log. */
  readonly lostPages: number;
}

export function logFigures(site: Pick<TestSite, 'expected'>, o: CrawlOutcome): LogFigures {
  const expected = site.expected(DEPTH);
  const done = new Set([...o.fetched, ...o.failed].map((x) => x.url));
  const items = named(o.events, 'ItemExtracted');
  return {
    pageFetchedRecords: o.fetched.length,
    pageFetchedDistinctEvents: distinct(o.fetched, (x) => x.event_id),
    pageFetchedDistinctFetches: distinct(o.fetched, (x) => x.fetch_id),
    itemRecords: items.length,
    itemDistinct: distinct(items, (x) => x.event_id),
    duplicateRecords: o.events.length - distinct(o.events, (e) => (e.event.value as { event_id: string }).event_id),
    fetchRequestedRecords: o.requested.length,
    fetchRequestedDistinct: distinct(o.requested, (x) => x.event_id),
    lostPages: expected.requested.filter((u) => !done.has(u)).length,
  };
}

// ---------------------------------------------------------------------------------------------
// Read models against the log (an oracle with none of the projectors' code, as in their tests).

export interface PgJobState {
  readonly status: string;
  readonly pages_fetched: number;
  readonly pages_failed: number;
  readonly items_extracted: number;
  readonly bytes: number;
  /** Rows of job_pages / job_items. */
  readonly page_rows: number;
  readonly item_rows: number;
  readonly failed_rows: number;
  readonly log_rows: number;
}

const later = (a: { occurred_at: Date; event_id: string }, b: { occurred_at: Date; event_id: string }) =>
  a.occurred_at.getTime() !== b.occurred_at.getTime() ? a.occurred_at > b.occurred_at : a.event_id > b.event_id;

/** What projector-pg must hold for the job, from its events (distinct event ids; a fetch is ok if any PageFetched). */
export function expectedPg(events: readonly LoggedEvent[]): PgJobState {
  const seen = new Set<string>();
  const evs: { name: string; value: EventMap[keyof EventMap] }[] = [];
  for (const { event } of events) {
    const id = (event.value as { event_id: string }).event_id;
    if (seen.has(id)) continue;
    seen.add(id);
    evs.push(event);
  }
  const of = <N extends keyof EventMap>(n: N) => evs.filter((e) => e.name === n).map((e) => e.value as EventMap[N]);
  const fetches = new Map<string, { ok?: PageFetched; failed?: PageFailed }>();
  for (const p of of('PageFetched')) {
    const f = fetches.get(p.fetch_id) ?? {};
    if (!f.ok || later(p, f.ok)) f.ok = p;
    fetches.set(p.fetch_id, f);
  }
  for (const p of of('PageFailed')) fetches.set(p.fetch_id, { ...fetches.get(p.fetch_id), failed: p });
  const ok = [...fetches.values()].filter((f) => f.ok);
  const items = new Set(of('ItemExtracted').map((i) => i.item_key));
  const completed = of('JobCompleted');
  const status = of('JobFailed').length > 0 ? 'failed' : completed.length > 0 ? completed[0]!.outcome : 'running';
  return {
    status,
    pages_fetched: ok.length,
    pages_failed: fetches.size - ok.length,
    items_extracted: items.size,
    bytes: ok.reduce((s, f) => s + f.ok!.bytes, 0),
    page_rows: fetches.size,
    item_rows: items.size,
    failed_rows: fetches.size - ok.length,
    // One log line per event but items (the page's line counts them).
    log_rows: evs.filter((e) => e.name !== 'ItemExtracted').length,
  };
}

export async function pgState(p: Pipeline, jobId: string): Promise<PgJobState | null> {
  const q = async <T>(sql: string): Promise<T | undefined> => (await p.db.pool.query(sql, [jobId]).catch(() => ({ rows: [] as T[] }))).rows[0] as T | undefined;
  const job = await q<{ status: string; pages_fetched: number; pages_failed: number; items_extracted: number; bytes: string }>(
    'SELECT status, pages_fetched, pages_failed, items_extracted, bytes FROM jobs WHERE job_id = $1',
  );
  if (!job) return null;
  const pages = await q<{ n: number; failed: number }>('SELECT count(*)::int AS n, (count(*) FILTER (WHERE NOT ok))::int AS failed FROM job_pages WHERE job_id = $1');
  const items = await q<{ n: number }>('SELECT count(*)::int AS n FROM job_items WHERE job_id = $1');
  const log = await q<{ n: number }>('SELECT count(*)::int AS n FROM job_log WHERE job_id = $1');
  return {
    status: job.status,
    pages_fetched: job.pages_fetched,
    pages_failed: job.pages_failed,
    items_extracted: job.items_extracted,
    bytes: Number(job.bytes),
    page_rows: pages?.n ?? 0,
    item_rows: items?.n ?? 0,
    failed_rows: pages?.failed ?? 0,
    log_rows: log?.n ?? 0,
  };
}

/** What projector-ch must answer for the job: one fact per event id (its own oracle's rules), in the facts and in the rollups. */
export function expectedCh(jobId: string, events: readonly LoggedEvent[]): JobTotals {
  const seen = new Set<string>();
  const t: JobTotals = { job_id: jobId, pages_fetched: 0, pages_failed: 0, bytes: 0, items: 0, retries: 0 };
  for (const e of events) {
    const { event } = e;
    const v = event.value as { event_id: string };
    if (seen.has(v.event_id)) continue;
    seen.add(v.event_id);
    if (event.name === 'PageFetched') {
      const p = event.value as PageFetched;
      t.pages_fetched++;
      t.bytes += p.bytes;
      t.retries += Math.max(p.attempt, 1) - 1;
    } else if (event.name === 'PageFailed') {
      const p = event.value as PageFailed;
      t.pages_failed++;
      t.retries += Math.max(p.attempts, 1) - 1;
    } else if (event.name === 'ItemExtracted') t.items++;
  }
  return t;
}

export function clickhouseOf(p: Pipeline, url = endpoints().clickhouseUrl): ClickHouse {
  return new ClickHouse({ url, database: p.env.CLICKHOUSE_DATABASE! });
}

export async function chState(ch: ClickHouse, jobId: string): Promise<{ rollups: JobTotals | null; facts: JobTotals | null }> {
  const none = () => [] as JobTotals[];
  const rollups = (await jobTotals(ch, [jobId]).catch(none)).find((t) => t.job_id === jobId) ?? null;
  const facts = (await jobTotalsFromFacts(ch).catch(none)).find((t) => t.job_id === jobId) ?? null;
  return { rollups, facts };
}

export interface ReadModelFigures {
  /** From `since` until both read models equal the log. */
  readonly caughtUpMs: number;
  readonly pg: PgJobState;
  readonly ch?: JobTotals;
  /** Rows the log implies that the read models miss (must be 0). */
  readonly lostRows: number;
}

/**
 * Waits until Postgres (and ClickHouse, when `ch` is given) equal what the job's events say, then
 * asserts it exactly (a timeout shows the difference). The job must have completed first, so the
 * log is final. ClickHouse's counters must also equal Postgres's.
 */
export async function expectReadModelsEqualLog(
  p: Pipeline,
  jobId: string,
  opts: { ch?: ClickHouse; since?: number; timeoutMs?: number; /** The event topics' records, when the caller has read them already. */ events?: readonly LoggedEvent[] } = {},
): Promise<ReadModelFigures> {
  const since = opts.since ?? Date.now();
  const events = ofJob(opts.events ?? (await retrying(() => p.events())), jobId);
  const wantPg = expectedPg(events);
  const wantCh = expectedCh(jobId, events);
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  let pg: PgJobState | null = null;
  let ch: { rollups: JobTotals | null; facts: JobTotals | null } = { rollups: null, facts: null };
  for (;;) {
    pg = await pgState(p, jobId);
    if (opts.ch) ch = await chState(opts.ch, jobId);
    const pgOk = JSON.stringify(pg) === JSON.stringify(wantPg);
    const chOk = !opts.ch || (JSON.stringify(ch.rollups) === JSON.stringify(wantCh) && JSON.stringify(ch.facts) === JSON.stringify(wantCh));
    if ((pgOk && chOk) || Date.now() > deadline) break;
    await sleep(500);
  }
  const caughtUpMs = Date.now() - since;
  // Settle, then read again: an over-count would show up after the first equality too.
  await sleep(2_000);
  pg = await pgState(p, jobId);
  expect(pg).toEqual(wantPg);
  if (opts.ch) {
    ch = await chState(opts.ch, jobId);
    expect(ch.facts).toEqual(wantCh);
    expect(ch.rollups).toEqual(wantCh);
    // Analytics (facts and rollups, equal above) equal the job-status read model.
    expect({ fetched: ch.facts!.pages_fetched, failed: ch.facts!.pages_failed, items: ch.facts!.items, bytes: ch.facts!.bytes })
      .toEqual({ fetched: pg!.pages_fetched, failed: pg!.pages_failed, items: pg!.items_extracted, bytes: pg!.bytes });
  }
  const lostRows = Math.max(0, wantPg.page_rows - (pg?.page_rows ?? 0)) + Math.max(0, wantPg.item_rows - (pg?.item_rows ?? 0)) + Math.max(0, wantPg.log_rows - (pg?.log_rows ?? 0));
  return { caughtUpMs, pg: pg!, ...(opts.ch ? { ch: ch.facts! } : {}), lostRows };
}

// ---------------------------------------------------------------------------------------------
// Replay (invariant 7): what the fault left in the log must rebuild to the live read models.

export interface ReplayFigures {
  /** Events read, seconds taken and how long the live projector was held back, per read model. */
  readonly pg: { readonly events: number; readonly seconds: number; readonly pausedMs: number };
  readonly ch: { readonly events: number; readonly seconds: number; readonly pausedMs: number };
}

export interface ReplayReport {
  readonly verified: string;
  readonly events: number;
  readonly seconds: number;
  readonly pausedMs: number;
  /** Per table: rows and checksum (pg: jobs, pages, items, log, cache). */
  readonly checksum: Readonly<Record<string, { readonly rows: number; readonly checksum: string } | number>>;
}

/** `trawl replay <target>` as an operator runs it, with the pipeline's environment; its JSON report. */
export function trawlReplay(p: Pipeline, target: 'pg' | 'ch'): Promise<ReplayReport> {
  return new Promise<ReplayReport>((resolve, reject) => {
    // --swap-threshold 0: the whole log through the bulk path first. A crawl of this size is far
    // below the default threshold, which would read it all row by row under the swap lock and
    // never reach the path where a log's shape can break a replay (issue 26: the bulk settle).
    const child = spawn(process.execPath, [join(repoRoot, 'apps', 'tools', 'cli', 'bin', 'trawl.js'), 'replay', target, '--swap-threshold', '0'], {
      cwd: repoRoot,
      env: { ...process.env, ...p.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`trawl replay ${target} exited with ${code}: ${stderr.split('\n').filter((l) => l.startsWith('trawl:')).join('\n') || stderr.slice(-2000)}`));
      else resolve(JSON.parse(stdout) as ReplayReport);
    });
  });
}

/**
 * Ends a scenario: `trawl replay pg` and `trawl replay ch` rebuild both read models from the log the
 * fault left (re-emitted copies, redeliveries and all) beside the live ones, while the live
 * projectors run, and swap them in only if their checksums equal the live tables' at the same
 * offsets (verified: 'live'). Call it once the live read models have caught up.
 */
export async function expectReplaysEqualLive(p: Pipeline): Promise<ReplayFigures> {
  const pg = await trawlReplay(p, 'pg');
  const ch = await trawlReplay(p, 'ch');
  expect({ pg: pg.verified, ch: ch.verified }).toEqual({ pg: 'live', ch: 'live' });
  const figures = (r: ReplayReport) => ({ events: r.events, seconds: Number(r.seconds.toFixed(1)), pausedMs: r.pausedMs });
  return { pg: figures(pg), ch: figures(ch) };
}

// ---------------------------------------------------------------------------------------------
// Figures.

/**
 * Polls `probe` from now until it exceeds `from` (default: its value at the start; a probe that
 * fails counts as no progress); resolves with the ms it took, or null at the deadline.
 */
export function timeToProgress(probe: () => Promise<number>, timeoutMs = 240_000, from?: number): Promise<number | null> {
  const t0 = Date.now();
  return (async () => {
    let base = from ?? Number.NaN;
    for (;;) {
      const v = await probe().catch(() => Number.NaN);
      if (Number.isNaN(base)) base = v;
      else if (v > base) return Date.now() - t0;
      if (Date.now() - t0 > timeoutMs) return null;
      await sleep(250);
    }
  })();
}

/** Pages (fetched + failed) of the job in the log. */
export const pagesInLog = (p: Pipeline, jobId: string) => async () => count(await p.events(), jobId, 'PageFetched', 'PageFailed');

/** One line per scenario, easy to grep from the test output: `CHAOS <scenario> {...}`. */
export function report(scenario: string, figures: Record<string, unknown>): void {
  console.log(`CHAOS ${scenario} ${JSON.stringify(figures)}`);
}

/** The Kafka group's committed offsets of the pipeline's event topics, summed with what a read model has stored. */
export async function groupLag(p: Pipeline, groupPrefix: string, stored: (topic: string, partition: number) => Promise<bigint | undefined>): Promise<{ group: string | null; storedNotCommitted: number }> {
  const admin = p.kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.listGroups();
    const group = groups.map((g) => g.groupId).find((g) => g.startsWith(`${p.prefix}${groupPrefix}`)) ?? null;
    if (!group) return { group, storedNotCommitted: 0 };
    let n = 0n;
    for (const entry of await admin.fetchOffsets({ groupId: group, topics: p.topics.events })) {
      for (const part of entry.partitions) {
        const committed = BigInt(part.offset) < 0n ? 0n : BigInt(part.offset);
        const s = await stored(entry.topic, part.partition);
        if (s !== undefined && s > committed) n += s - committed;
      }
    }
    return { group, storedNotCommitted: Number(n) };
  } finally {
    await admin.disconnect();
  }
}

/** `host:port` of a URL (default port by scheme). */
export function hostPort(url: string, dflt: number): { host: string; port: number } {
  const u = new URL(url.includes('://') ? url : `tcp://${url}`);
  return { host: u.hostname, port: Number(u.port || dflt) };
}

/** `url` with its host and port replaced by the proxy's. */
export function viaProxy(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString().replace(/\/$/, '');
}

function listen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer().once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A first port p with p..p+5 free: three brokers on p, p+2, p+4 and their controllers on p+1, p+3,
 * p+5. Below Linux's ephemeral range (32768 on): a port free now could otherwise be taken by any
 * outgoing connection before a node binds it.
 */
export async function freeRun(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 20_000 + 2 * Math.floor(Math.random() * 6_000);
    const free = await Promise.all([0, 1, 2, 3, 4, 5].map((d) => listen(base + d)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no six free ports in a row');
}
