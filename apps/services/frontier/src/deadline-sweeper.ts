/**
 * The frontier's clock: every `sweepEveryMs`, the jobs that have not moved for the fetch deadline
 * get their tick (FrontierProcessor.expire), each in a transaction of its own: its row is locked,
 * its state re-read, the FETCH_LOST events and the JobCompleted produced and acknowledged, then the
 * state committed — the same "produce first, then commit" as a batch, so a crash in between ticks
 * again after the restart and re-emits the same events (deterministic ids and times).
 *
 * The time a job is judged by is the log clock's (log-clock.ts), not the wall clock: the latest
 * moment by which the frontier has applied every page event, so outcomes that wait unread in
 * trawl.pages (a frontier that was down, a partition behind) are never taken for lost fetches.
 *
 * Nothing here is kept in memory that a restart needs: a job's last move is in its row
 * (frontier_jobs.active_at), and the log clock starts again from a fresh sample.
 */
import type { Logger } from '@trawl/streams';
import { inTransaction, type Pool } from '@trawl/store';
import type { FrontierProcessor } from './frontier-processor.ts';
import type { FrontierStore } from './frontier-store.ts';
import { LogClock } from './log-clock.ts';

export interface DeadlineSweeperOptions {
  readonly pool: Pool;
  readonly store: FrontierStore;
  readonly processor: FrontierProcessor;
  readonly logger: Logger;
  readonly deadlineMs: number;
  readonly sweepEveryMs: number;
  /** The end of trawl.pages now: partition → offset after its last message. */
  readonly pagesEnd: () => Promise<ReadonlyMap<number, bigint>>;
  /** How far the frontier has applied trawl.pages: partition → next offset (its stored offsets). */
  readonly pagesApplied: () => Promise<ReadonlyMap<number, bigint>>;
  /** Jobs ticked per sweep at most; the rest wait for the next. Default 500. */
  readonly maxJobsPerSweep?: number;
  readonly now?: () => number;
}

export interface SweepResult {
  /** The log clock the jobs were judged by; null while the frontier has not caught up with a sample. */
  readonly at: number | null;
  readonly jobs: number;
  readonly emitted: number;
}

export class DeadlineSweeper {
  private readonly clock = new LogClock();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly o: DeadlineSweeperOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One look: sample the log's end, judge the silent jobs by the clock reached. */
  async sweep(): Promise<SweepResult> {
    const now = this.o.now ?? Date.now;
    // The watermarks first, then the offsets: the offsets can only have moved on in between.
    const sampledAt = now();
    this.clock.record({ at: sampledAt, high: await this.o.pagesEnd() });
    const at = this.clock.caughtUpTo(await this.o.pagesApplied());
    if (at === null) return { at, jobs: 0, emitted: 0 };
    const silent = await this.o.store.silentJobs(this.o.pool, at - this.o.deadlineMs, this.o.maxJobsPerSweep ?? 500);
    let emitted = 0;
    for (const jobId of silent) {
      if (this.stopped) break;
      const r = await inTransaction(this.o.pool, (tx) => this.o.processor.expire([jobId], { at, deadlineMs: this.o.deadlineMs }, tx));
      emitted += r.emitted;
    }
    return { at, jobs: silent.length, emitted };
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.sweep()
        .then(
          (r) => {
            if (r.jobs > 0) this.o.logger.info({ jobs: r.jobs, emitted: r.emitted, clock: r.at === null ? null : new Date(r.at) }, 'fetch deadline swept');
          },
          // Kafka or Postgres away: nothing was committed; the next sweep tries again.
          (err: unknown) => this.o.logger.warn({ err }, 'fetch deadline sweep failed; trying again at the next'),
        )
        .finally(() => this.schedule());
    }, this.o.sweepEveryMs);
  }
}
