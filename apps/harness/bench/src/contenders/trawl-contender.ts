/**
 * Trawl as the contender: the e2e Pipeline (own topics, own database, every service a child
 * process on the real stack) kept running across rounds, as a deployed Trawl would be, and one job
 * per round. A round runs from the JobDispatched (produced by the bench, as the API or the
 * dispatcher would) to JobCompleted *and* every projector caught up with the log; both times are
 * reported. The API is not in the path: POST /crawl adds one Postgres transaction and one produce
 * before the JobDispatched, and cannot set the per-host concurrency the comparison needs.
 *
 * Readiness: a small warm-up job runs before the first round, so group joins, schema
 * registrations and connection pools are not billed to round one (Crawlee's and the limit's module
 * loading is excluded in the same way: their clock starts when their crawl starts).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { appDir, endOffsets, endpoints, httpTarget, subscribeLive, trawlHome, type LiveEvent, type LiveSubscription } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import type { JobCompleted, JobFailed } from '@trawl/schemas';
import { Pipeline, type AppName, type Child } from '@trawl/e2e';
import { ITEM_FIELDS, ITEM_ROOT } from '../site/site-model.ts';
import type { SiteProcess } from '../site/site-process.ts';
import { steadyPagesPerSecond } from '../site/site-stats.ts';
import { ProcessSampler, round, type GroupUsage, type ProcessGroup } from '../measure/process-sampler.ts';
import { descendantPids, findPids } from '../measure/proc-stat.ts';
import { clickhouseServerPid, s3ServerPid, kafkaBrokerPid } from '../measure/stack-pids.ts';
import { ProjectorLag } from '../measure/projector-lag.ts';
import { onInterrupt } from '../measure/on-interrupt.ts';

export interface TrawlSetup {
  readonly workers: number;
  /** Per-partition concurrency of the workers, and per-host concurrency unless `hostConcurrency` says otherwise. */
  readonly concurrency: number;
  /** The spec's host_concurrency (a site over H hosts at a total of C: C / H). */
  readonly hostConcurrency?: number;
  readonly eventPartitions: number;
  readonly fetchPartitions: number;
  /** Spawn the projectors that exist (apps/services/projector-pg, apps/services/projector-ch). */
  readonly projectors: boolean;
  /** Apps run under --cpu-prof (profiles written at stop()). */
  readonly cpuProfile?: readonly AppName[];
  readonly cpuProfileDir?: string;
  /** Extra environment for every service. */
  readonly env?: Readonly<Record<string, string>>;
  /** Crawl spec fields laid over the bench's own for every job (a variant's `spec.<field>=…`). */
  readonly spec?: Readonly<Record<string, unknown>>;
  /** Browser rendering (requires_browser) for the job. */
  readonly browser?: boolean;
  /** Names the contender in the figures (default "trawl"). */
  readonly label?: string;
}

export interface TrawlRun {
  /** "trawl", or "trawl-<label>" for a variant. */
  readonly contender: string;
  readonly pages: number;
  readonly failed: number;
  readonly items: number;
  /** Dispatch → JobCompleted (the frontier's produce time of JobCompleted). */
  readonly crawlSeconds: number;
  /** Dispatch → JobCompleted and every projector caught up: the figure compared. */
  readonly seconds: number;
  readonly pagesPerSecond: number;
  /** Events (messages) written to the pipeline's topics during the round. */
  readonly kafkaMessages: number;
  readonly kafkaMessagesPerSecond: number;
  /** Per projector: events not yet applied when JobCompleted was seen, and ms until they were. */
  readonly projectorLag: Readonly<Record<string, { readonly eventsAtCompletion: number; readonly catchUpMs: number }>>;
  readonly processes: readonly GroupUsage[];
  readonly siteRequests: number;
  /** Where the round's time went: the pace between the first and last page, and the hops around it. */
  readonly phases: TrawlPhases;
}

export interface TrawlPhases {
  /** Dispatch → the site served the first page (the frontier's first fetch command and a worker's fetch). */
  readonly toFirstPageMs: number | null;
  /** Pages a second between the first and the last page served. */
  readonly steadyPagesPerSecond: number | null;
  /** The last page served → JobCompleted produced. */
  readonly lastPageToCompletedMs: number | null;
  /** JobCompleted → every projector caught up. */
  readonly completedToCaughtUpMs: number;
  /** Pages served per 100 ms from the first page on (the site's timeline). */
  readonly timeline: readonly number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function availableProjectors(): AppName[] {
  return (['projector-pg', 'projector-ch'] as const).filter((app) => existsSync(join(appDir(app), 'src', 'main.ts')));
}

export class TrawlContender {
  private readonly completions = new Map<string, (e: { value: JobCompleted | JobFailed; at: number }) => void>();

  private constructor(
    readonly pipeline: Pipeline,
    readonly site: SiteProcess,
    readonly setup: TrawlSetup,
    readonly projectors: readonly AppName[],
    private readonly live: LiveSubscription,
    private readonly lag: ProjectorLag,
    private readonly forgetInterrupt: () => void,
    /** The ClickHouse database projector-ch writes (one per pipeline, dropped at stop()). */
    readonly clickhouseDatabase: string,
  ) {}

  static async start(site: SiteProcess, setup: TrawlSetup): Promise<TrawlContender> {
    // projector-ch writes to CLICKHOUSE_DATABASE: a database per pipeline, as Postgres gets one,
    // so the bench's facts never mix with anyone's (it creates the database; stop() drops it).
    const clickhouseDatabase = `trawl_bench_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const pipeline = await Pipeline.start({
      env: {
        CLICKHOUSE_DATABASE: clickhouseDatabase,
        TRAWL_EVENT_PARTITIONS: String(setup.eventPartitions),
        TRAWL_FETCH_PARTITIONS: String(setup.fetchPartitions),
        TRAWL_WORKER_CONCURRENCY: String(setup.concurrency),
        // Transient failures (--fail-rate) retry in about the time Crawlee's immediate retries take.
        TRAWL_FETCH_RETRY_DELAYS_MS: '200,1000,2000',
        TRAWL_LOG_LEVEL: 'info',
        ...setup.env,
      },
      ...(setup.cpuProfile ? { cpuProfile: setup.cpuProfile } : {}),
      ...(setup.cpuProfileDir ? { cpuProfileDir: setup.cpuProfileDir } : {}),
    });
    const projectors = setup.projectors ? availableProjectors() : [];
    const stopAll = async () => {
      await pipeline.stop();
      await dropClickhouseDatabase(clickhouseDatabase);
    };
    const forget = onInterrupt(stopAll);
    let contender: TrawlContender | undefined;
    try {
      pipeline.spawn('frontier');
      for (let i = 0; i < setup.workers; i++) pipeline.spawn('worker');
      for (const p of projectors) pipeline.spawn(p);
      const live = await subscribeLive({
        kafka: pipeline.kafka,
        codec: pipeline.codec,
        logger: pipeline.logger,
        topics: [pipeline.topics.jobs],
        names: ['JobCompleted', 'JobFailed'],
        groupPrefix: 'trawl-bench',
        onEvent: (e: LiveEvent) => contender?.onJobEnded(e),
      });
      await live.ready;
      contender = new TrawlContender(pipeline, site, setup, projectors, live, new ProjectorLag(pipeline, [...projectors]), forget, clickhouseDatabase);
      await contender.warmUp();
      return contender;
    } catch (err) {
      forget();
      await stopAll();
      throw err;
    }
  }

  private onJobEnded(e: LiveEvent): void {
    const value = e.value as JobCompleted | JobFailed;
    this.completions.get(value.job_id)?.({ value, at: Number(e.timestamp) });
  }

  /** A 20-page job: every service has joined its group, registered its schemas, opened its pools. */
  private async warmUp(): Promise<void> {
    const ended = await this.dispatchAndWait(20, 10 * 60_000);
    if ('error_code' in ended.value) throw new Error(`warm-up job failed: ${ended.value.error_code} ${ended.value.reason}`);
    await this.waitCaughtUp(5 * 60_000);
  }

  /** Until the projectors caught up, dropping any that dies meanwhile. */
  private async waitCaughtUp(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.checkChildren();
      const at = await this.lag.waitCaughtUp(Math.min(2_000, Math.max(1, deadline - Date.now()))).catch((err: unknown) => {
        if (Date.now() >= deadline) throw err;
        return undefined;
      });
      if (at !== undefined) return at;
    }
  }

  private async dispatchAndWait(maxPages: number, timeoutMs: number): Promise<{ value: JobCompleted | JobFailed; at: number; dispatchedAt: number }> {
    const jobId = randomUUID();
    const ended = new Promise<{ value: JobCompleted | JobFailed; at: number }>((resolve) => this.completions.set(jobId, resolve));
    const dispatchedAt = Date.now();
    await this.pipeline.producer.emit(
      'JobDispatched',
      {
        job_id: jobId,
        user_id: 'bench',
        target_id: null,
        schedule_id: null,
        search_url: this.site.home,
        start_urls: [this.site.home],
        keywords: [],
        location: null,
        spec: {
          ...crawlSpec(null, { depth: 1_000, max_pages: maxPages }),
          host_concurrency: this.setup.hostConcurrency ?? this.setup.concurrency,
          allowed_hosts: [...this.site.hosts],
          requires_browser: this.setup.browser ?? false,
          item_root: ITEM_ROOT,
          item_fields: ITEM_FIELDS.map((f) => ({ ...f, xpath: null, transforms: [] })),
          ...this.setup.spec,
        },
        attempt: 1,
        params: {},
      },
      { topic: this.pipeline.topics.jobs },
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = await Promise.race([ended, sleep(1_000).then(() => undefined)]);
      if (done) {
        this.completions.delete(jobId);
        return { ...done, dispatchedAt };
      }
      this.checkChildren();
      if (Date.now() > deadline) throw new Error(`job ${jobId} did not end within ${timeoutMs} ms`);
    }
  }

  /**
   * A dead frontier or worker ends the bench. A dead projector (projector-ch and -pg are being
   * written while this bench runs) is left out of the figures, said loudly and kept in `dropped`.
   */
  private checkChildren(): void {
    for (const c of this.pipeline.children) {
      if (c.process.exitCode === null || c.process.exitCode === 0) continue;
      const log = `${join(trawlHome(), 'logs', 'e2e')}/${this.pipeline.prefix}${c.app}-*.log`;
      if (c.app.startsWith('projector-')) {
        if (this.lag.drop(c.app)) {
          this.dropped.push({ app: c.app, reason: `exited with code ${c.process.exitCode}; see ${log}` });
          process.stderr.write(`  · WARNING: ${c.app} exited with code ${c.process.exitCode}; measuring without it (see ${log})\n`);
        }
        continue;
      }
      throw new Error(`${c.app} exited with code ${c.process.exitCode}; see ${log}`);
    }
  }

  /** Projectors that exist but died, with why: reported next to the figures. */
  readonly dropped: { app: AppName; reason: string }[] = [];

  /** The projectors the figures include. */
  get measuredProjectors(): readonly AppName[] {
    return this.lag.projectors;
  }

  /** One measured crawl of the whole site. */
  async run(expectedPages: number, timeoutMs = 30 * 60_000): Promise<TrawlRun> {
    await this.site.reset();
    const topics = this.pipeline.topics.specs.map((s) => s.name);
    const before = sumOffsets(await endOffsets(this.pipeline.kafka, topics));
    const sampler = new ProcessSampler(this.processGroups());
    sampler.start();
    const ended = await this.dispatchAndWait(expectedPages * 2, timeoutMs);
    this.checkChildren();
    const atCompletion = await this.lag.measure();
    const caughtUp = await this.waitCaughtUp(5 * 60_000);
    // Without projectors the job's end is the end; with them, the last projector's catching up.
    const finishedAt = this.lag.projectors.length > 0 ? caughtUp : ended.at;
    const processes = sampler.stop();
    const after = sumOffsets(await endOffsets(this.pipeline.kafka, topics));
    const stats = await this.site.stats();
    if ('error_code' in ended.value) throw new Error(`the job failed: ${ended.value.error_code} ${ended.value.reason}`);
    const completed = ended.value;
    const seconds = (finishedAt - ended.dispatchedAt) / 1000;
    const projectorLag: Record<string, { eventsAtCompletion: number; catchUpMs: number }> = {};
    for (const [name, events] of Object.entries(atCompletion)) projectorLag[name] = { eventsAtCompletion: events, catchUpMs: Math.max(0, caughtUp - ended.at) };
    return {
      contender: this.setup.label ?? 'trawl',
      pages: completed.pages_fetched,
      failed: completed.pages_failed,
      items: completed.items_extracted,
      crawlSeconds: round((ended.at - ended.dispatchedAt) / 1000, 2),
      seconds: round(seconds, 2),
      pagesPerSecond: round(completed.pages_fetched / seconds, 1),
      kafkaMessages: Number(after - before),
      kafkaMessagesPerSecond: round(Number(after - before) / seconds, 0),
      projectorLag,
      processes,
      siteRequests: stats.requests,
      phases: {
        toFirstPageMs: stats.firstPageAt === null ? null : stats.firstPageAt - ended.dispatchedAt,
        steadyPagesPerSecond: steadyPagesPerSecond(stats),
        lastPageToCompletedMs: stats.lastPageAt === null ? null : ended.at - stats.lastPageAt,
        completedToCaughtUpMs: Math.max(0, finishedAt - ended.at),
        timeline: stats.timeline,
      },
    };
  }

  private processGroups(): ProcessGroup[] {
    const byApp = new Map<string, Child[]>();
    for (const c of this.pipeline.children) {
      if (c.process.exitCode !== null) continue; // a projector that died (see `dropped`)
      const list = byApp.get(c.app) ?? [];
      list.push(c);
      byApp.set(c.app, list);
    }
    const groups: ProcessGroup[] = [];
    for (const [app, children] of byApp) {
      children.forEach((c, i) => groups.push({ label: children.length > 1 ? `${app}-${i + 1}` : app, pids: () => [c.process.pid!] }));
    }
    if (this.setup.browser) {
      const workers = byApp.get('worker') ?? [];
      groups.push({ label: 'chromium', pids: () => workers.flatMap((w) => descendantPids(w.process.pid!)) });
    }
    const dbName = new URL(this.pipeline.db.url).pathname.slice(1);
    groups.push({ label: 'postgres (this db)', pids: () => findPids(` ${dbName} `), shared: true });
    const broker = kafkaBrokerPid();
    if (broker !== null) groups.push({ label: 'kafka broker', pids: () => [broker], shared: true });
    const clickhouse = this.projectors.includes('projector-ch') ? clickhouseServerPid() : null;
    if (clickhouse !== null) groups.push({ label: 'clickhouse server', pids: () => [clickhouse], shared: true });
    const s3 = s3ServerPid();
    if (s3 !== null) groups.push({ label: 's3 server', pids: () => [s3], shared: true });
    groups.push({ label: 'site server', pids: () => [this.site.pid] });
    return groups;
  }

  async stop(): Promise<void> {
    this.forgetInterrupt();
    await this.live.stop().catch(() => undefined);
    await this.lag.close();
    await this.pipeline.stop();
    await dropClickhouseDatabase(this.clickhouseDatabase);
  }
}

async function dropClickhouseDatabase(name: string): Promise<void> {
  const ch = httpTarget(endpoints().clickhouseUrl);
  await fetch(ch.url, { method: 'POST', body: `DROP DATABASE IF EXISTS ${name}`, headers: ch.authorization ? { authorization: ch.authorization } : {} }).catch(() => undefined);
}

function sumOffsets(ends: Map<string, bigint>): bigint {
  let n = 0n;
  for (const v of ends.values()) n += v;
  return n;
}
