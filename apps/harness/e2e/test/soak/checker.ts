/**
 * The soak's checker, independent of the services and of the load driver: it reads only the
 * generated sites' access logs, the raw topics (decoded by a codec of its own through the
 * registry) and the read models (Postgres, ClickHouse), and it finds the jobs and their sites from
 * the log (JobDispatched's start URL). Every round (every 5 minutes, and at the end) it checks the
 * jobs that have completed since the last round:
 *
 * - `decodable`: every record of every topic decodes through the registry;
 * - `completed-once`: one JobCompleted (one event id, outcome finished), no JobFailed; at the end,
 *   every job dispatched has completed;
 * - `exact-pages`: the site's exact URL set requested, fetched and failed, and JobCompleted's
 *   counters (support.ts expectExactCrawl);
 * - `no-refetch`: from the site's access log, no never-served URL served, every fetched page served,
 *   and no page served twice unless the log shows it retried; a page served again after a fault
 *   on the fetch path (worker, frontier, broker, registry, Postgres) while the job ran is an
 *   at-least-once redelivery, counted, not a violation;
 * - `read-models`: Postgres's job state and ClickHouse's facts and rollups equal what the log says
 *   (support.ts expectReadModelsEqualLog), and at the end, again, for every job;
 * - `replay` (at the end): both read models rebuilt from the log equal the live ones.
 */
import type { JobCompleted, JobDispatched, PageFailed, PageFetched } from '@trawl/schemas';
import { EventCodec, readTopics, type LoggedEvent, type LoggedMessage } from '@trawl/streams';
import type { ClickHouse } from '@trawl/projector-ch';
import type { Pipeline } from '../../src/index.ts';
import {
  DEPTH, chState, expectExactCrawl, expectReadModelsEqualLog, expectReplaysEqualLive, expectedCh, expectedPg, logFigures, named, ofJob, outcomeOf, pgState, retrying,
} from '../chaos/support.ts';
import type { SiteView } from './load.ts';
import type { Fault } from './nemesis.ts';

export const INVARIANTS = ['decodable', 'completed-once', 'exact-pages', 'no-refetch', 'read-models', 'replay'] as const;
export type InvariantName = (typeof INVARIANTS)[number];

export interface Tally {
  checked: number;
  passed: number;
  failed: number;
}

export interface Violation {
  readonly invariant: InvariantName;
  readonly jobId?: string;
  readonly message: string;
  readonly at: number;
}

/** Targets whose fault can make a page be fetched again (a fetch redelivered, re-requested). */
const FETCH_PATH = (target: string) => !['projector-pg', 'projector-ch', 'api', 'dispatcher', 'clickhouse'].includes(target);

interface JobInfo {
  readonly jobId: string;
  readonly origin: string;
  readonly scheduled: boolean;
  readonly dispatchedAt: number;
}

const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};
const yieldNow = () => new Promise((r) => setImmediate(r));

export class Checker {
  readonly tallies = Object.fromEntries(INVARIANTS.map((i) => [i, { checked: 0, passed: 0, failed: 0 }])) as Record<InvariantName, Tally>;
  readonly violations: Violation[] = [];
  /** Jobs whose checks have run, and what they found. */
  private readonly checked = new Set<string>();
  readonly figures = { records: 0, jobsSeen: 0, jobsCompleted: 0, jobsChecked: 0, duplicateRecordsAbsorbed: 0, refetchedAfterFault: 0, sharedSites: 0, rounds: 0 };
  private jobs: JobInfo[] = [];

  constructor(
    private readonly p: Pipeline,
    private readonly ch: ClickHouse,
    private readonly sites: ReadonlyMap<string, SiteView>,
    private readonly faults: readonly Fault[],
    private readonly log: (line: string) => void,
    /** Called once a job's site has been checked (the load then closes the site). */
    private readonly onChecked: (origin: string) => Promise<void> = async () => undefined,
  ) {}

  private async assert(invariant: InvariantName, jobId: string | undefined, fn: () => unknown): Promise<boolean> {
    const t = this.tallies[invariant];
    t.checked++;
    try {
      await fn();
      t.passed++;
      return true;
    } catch (err) {
      t.failed++;
      // An assertion's own message elides nested values: the values themselves, in full.
      const e = err as { message?: string; actual?: unknown; expected?: unknown };
      const values = 'actual' in e && 'expected' in e ? `\n  actual:   ${JSON.stringify(e.actual)}\n  expected: ${JSON.stringify(e.expected)}` : '';
      const message = `${(e.message ?? String(err)).split('\n').slice(0, 12).join('\n')}${values}`;
      this.violations.push({ invariant, ...(jobId ? { jobId } : {}), message, at: Date.now() });
      this.log(`VIOLATION ${invariant}${jobId ? ` job ${jobId}` : ''}: ${message.split('\n')[0]}`);
      return false;
    }
  }

  /**
   * Every record of every topic of the pipeline, decoded by a new codec (so each schema id is asked
   * of the registry again). A record that fails to decode is tried again for a minute with another
   * codec (the registry may be restarting); one that still fails is a violation.
   */
  private async readLog(): Promise<LoggedEvent[]> {
    const names = this.p.topics.specs.map((s) => s.name);
    const messages = await retrying(() => readTopics(this.p.kafka, names), 180_000);
    const out: LoggedEvent[] = [];
    let codec = new EventCodec();
    const undecodable: { m: LoggedMessage; err: unknown }[] = [];
    for (const [i, m] of messages.entries()) {
      if (i % 200 === 0) await yieldNow(); // the sites share this process: keep answering them
      if (m.value === null) continue;
      try {
        out.push({ ...m, event: await codec.decode(m.value) });
      } catch (err) {
        undecodable.push({ m, err });
      }
    }
    const deadline = Date.now() + 60_000;
    while (undecodable.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5_000));
      codec = new EventCodec();
      for (const u of undecodable.splice(0)) {
        try {
          out.push({ ...u.m, event: await codec.decode(u.m.value) });
        } catch (err) {
          undecodable.push({ m: u.m, err });
        }
      }
    }
    this.figures.records = messages.length;
    await this.assert('decodable', undefined, () => {
      if (undecodable.length > 0) {
        const first = undecodable[0]!;
        throw new Error(`${undecodable.length} of ${messages.length} records do not decode; first: ${first.m.topic}-${first.m.partition}@${first.m.offset}: ${(first.err as Error).message}`);
      }
    });
    return out;
  }

  private overlapping(job: JobInfo, endedAt: number): Fault[] {
    return this.faults.filter((f) => f.injectedAt <= endedAt && (f.recoveredAt ?? Date.now()) + 10_000 >= job.dispatchedAt);
  }

  /** One round: `final` also requires every job to have completed, re-checks every read model and replays. */
  async round(final: boolean): Promise<void> {
    this.figures.rounds++;
    const all = await this.readLog();
    const eventTopics = new Set(this.p.topics.events);
    const events = all.filter((e) => eventTopics.has(e.topic));
    const withFetch = all.filter((e) => eventTopics.has(e.topic) || e.topic === this.p.topics.fetch);
    const dispatched = named(events.filter((e) => e.topic === this.p.topics.jobs), 'JobDispatched') as JobDispatched[];
    const byJob = new Map<string, JobInfo>();
    for (const d of dispatched) {
      if (byJob.has(d.job_id)) continue;
      byJob.set(d.job_id, { jobId: d.job_id, origin: new URL(d.start_urls[0] ?? d.search_url).origin, scheduled: d.schedule_id !== null, dispatchedAt: d.occurred_at.getTime() });
    }
    this.jobs = [...byJob.values()];
    const jobsOfSite = new Map<string, number>();
    for (const j of this.jobs) jobsOfSite.set(j.origin, (jobsOfSite.get(j.origin) ?? 0) + 1);
    const completed = new Set((named(events, 'JobCompleted') as JobCompleted[]).map((c) => c.job_id));
    const failedJobs = new Set(named(events, 'JobFailed').map((f) => f.job_id));
    this.figures.jobsSeen = this.jobs.length;
    this.figures.jobsCompleted = this.jobs.filter((j) => completed.has(j.jobId)).length;

    const before = new Set(this.checked);
    for (const job of this.jobs) {
      if (this.checked.has(job.jobId)) continue;
      if (!completed.has(job.jobId) && !failedJobs.has(job.jobId)) {
        if (final) await this.assert('completed-once', job.jobId, () => { throw new Error(`job ${job.jobId} (${job.scheduled ? 'scheduled' : 'ad hoc'}, dispatched ${new Date(job.dispatchedAt).toISOString()}) never completed`); });
        continue;
      }
      this.checked.add(job.jobId);
      this.figures.jobsChecked++;
      await this.checkJob(job, withFetch, events, (jobsOfSite.get(job.origin) ?? 0) > 1);
      if (!final) await this.onChecked(job.origin);
    }

    if (final) {
      // Still equal at the end: a late redelivery or a projector's replay must not have moved them.
      for (const job of this.jobs.filter((j) => before.has(j.jobId))) {
        const mine = ofJob(events, job.jobId);
        await this.assert('read-models', job.jobId, async () => {
          const pg = await pgState(this.p, job.jobId);
          const ch = await chState(this.ch, job.jobId);
          const want = { pg: expectedPg(mine), facts: expectedCh(job.jobId, mine), rollups: expectedCh(job.jobId, mine) };
          const got = { pg, facts: ch.facts, rollups: ch.rollups };
          if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`at the end, read models differ from the log: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
        });
      }
      await this.assert('replay', undefined, async () => {
        const r = await expectReplaysEqualLive(this.p);
        this.log(`checker: replay pg ${r.pg.events} events in ${r.pg.seconds} s, ch ${r.ch.events} events in ${r.ch.seconds} s: equal to the live read models`);
      });
    }
  }

  private async checkJob(job: JobInfo, withFetch: readonly LoggedEvent[], events: readonly LoggedEvent[], shared: boolean): Promise<void> {
    const site = this.sites.get(job.origin);
    const o = outcomeOf(withFetch, job.jobId, this.p.topics.fetch);
    await this.assert('completed-once', job.jobId, () => {
      const ids = new Set(o.completed.map((c) => c.event_id));
      if (named(o.events, 'JobFailed').length > 0) throw new Error(`job ${job.jobId} failed: ${JSON.stringify(named(o.events, 'JobFailed')[0])}`);
      if (ids.size !== 1) throw new Error(`job ${job.jobId} has ${ids.size} JobCompleted event ids`);
      if (o.completed[0]!.outcome !== 'finished') throw new Error(`job ${job.jobId} completed ${o.completed[0]!.outcome}`);
    });
    if (!site) {
      await this.assert('exact-pages', job.jobId, () => { throw new Error(`job ${job.jobId} crawled ${job.origin}, which is none of the soak's sites`); });
      return;
    }
    await this.assert('exact-pages', job.jobId, () => expectExactCrawl(site, o));
    const figures = logFigures(site, o);
    this.figures.duplicateRecordsAbsorbed += figures.duplicateRecords;
    if (shared) {
      // Two jobs on one site (the target not moved in time): their access logs cannot be told apart.
      this.figures.sharedSites++;
    } else {
      const endedAt = o.completed[0]?.occurred_at.getTime() ?? Date.now();
      const excusing = this.overlapping(job, endedAt).filter((f) => FETCH_PATH(f.target));
      await this.assert('no-refetch', job.jobId, () => {
        const expected = site.expected(DEPTH);
        const served = site.accessLog;
        const wrongly = expected.neverServed.filter((u) => served.count(pathOf(u)) > 0);
        if (wrongly.length > 0) throw new Error(`served what must never be: ${wrongly.join(', ')}`);
        const missing = expected.fetched.filter((u) => served.count(pathOf(u)) === 0);
        if (missing.length > 0) throw new Error(`PageFetched in the log but never served: ${missing.join(', ')}`);
        const retried = new Set([
          ...(o.fetched as PageFetched[]).filter((f) => f.attempt > 1).map((f) => pathOf(f.url)),
          ...(o.failed as PageFailed[]).filter((f) => f.attempts > 1).map((f) => pathOf(f.url)),
        ]);
        const repeats = [...served.duplicates().keys()].filter((p) => p !== '/robots.txt' && !retried.has(p));
        if (repeats.length === 0) return;
        if (excusing.length > 0) {
          this.figures.refetchedAfterFault += repeats.length;
          return;
        }
        throw new Error(`served more than once with no retry and no fault on the fetch path: ${repeats.slice(0, 10).join(', ')}`);
      });
    }
    await this.assert('read-models', job.jobId, () => expectReadModelsEqualLog(this.p, job.jobId, { ch: this.ch, events, timeoutMs: 180_000 }));
  }

  /** Jobs seen in the log that have not completed yet. */
  pending(): number {
    return this.figures.jobsSeen - this.figures.jobsChecked;
  }
}
