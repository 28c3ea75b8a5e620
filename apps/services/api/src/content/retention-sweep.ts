/**
 * Enforces content retention: every `sweepMs` it deletes the stored content of ended jobs whose
 * retention has run out (content/retention.ts), a batch at a time, keeping every object another
 * live job's page still names (delete-job-content.ts). Every API instance runs one; a job is
 * claimed in Postgres before its content goes, so instances never delete one job twice at once.
 */
import type { ContentStore } from '@trawl/content';
import type { Logger } from '@trawl/streams';
import type { Pool } from '@trawl/store';
import { expiredJobs } from '../data/job-content.ts';
import type { ContentRetentionConfig } from './retention.ts';
import { deleteJobContent, STALE_DELETION_MS } from './delete-job-content.ts';

export interface RetentionSweepOptions {
  readonly pool: Pool;
  readonly store: Pick<ContentStore, 'delete'>;
  readonly config: ContentRetentionConfig;
  readonly logger?: Pick<Logger, 'info' | 'warn'>;
  /** Jobs looked at per query. */
  readonly batch?: number;
  /** Batches per round at most, so one round over a large backlog ends and the next goes on. */
  readonly maxBatches?: number;
}

export interface SweepResult {
  readonly jobs: number;
  readonly objects: number;
}

export class RetentionSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult> | undefined;

  constructor(private readonly o: RetentionSweepOptions) {}

  /** One round: the expired jobs' content deleted, oldest job first. */
  async sweepOnce(): Promise<SweepResult> {
    const batch = this.o.batch ?? 100;
    let jobs = 0;
    let objects = 0;
    for (let round = 0; round < (this.o.maxBatches ?? 10); round++) {
      const expired = await expiredJobs(this.o.pool, this.o.config, batch, STALE_DELETION_MS);
      for (const jobId of expired) {
        const deleted = await deleteJobContent(this.o.pool, this.o.store, jobId, 'retention');
        if (deleted === null) continue;
        jobs++;
        objects += deleted;
      }
      if (expired.length < batch) break;
    }
    if (jobs > 0) this.o.logger?.info({ jobs, objects }, 'content past its retention deleted');
    return { jobs, objects };
  }

  /** Sweeps every `sweepMs` (not at all when 0); a round never overlaps the one before. */
  start(): void {
    if (this.o.config.sweepMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweepOnce()
        .catch((err: unknown) => {
          this.o.logger?.warn({ err }, 'content retention sweep failed; the next round retries');
          return { jobs: 0, objects: 0 };
        })
        .finally(() => (this.running = undefined));
    }, this.o.config.sweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
