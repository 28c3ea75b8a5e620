/**
 * One job's log, polled once for all its SSE streams on this API instance.
 *
 * Each round reads the job's progress (status, `log_seq`, counters) — one narrow row — and, when
 * `log_seq` moved, the new `job_log` rows once, which go to every stream that has everything up
 * to them. So N streams of one job cost one query per round plus one per change, not 2·N per
 * round. A stream that is behind (it resumed from an older `Last-Event-ID`, or it was too slow to
 * take what it was offered) reads its own rows from Postgres until it has caught up; then it takes
 * the shared ones again.
 *
 * No gaps, no repeats, no early end (the invariants of the SSE route): rows are offered only to a
 * follower that has every row before them, and each follower skips what it already has; the
 * status is read before the rows of a round (projector-pg writes both in one transaction with a
 * gapless per-job seq), so once a terminal status is seen, every row up to its `log_seq` exists,
 * and a follower ends only when it has them all.
 *
 * A slow follower holds at most `maxPending` offered rows; past that it drops them and reads
 * from Postgres again when it is ready, so a stuck client costs bounded memory.
 */
import type { JobProgress } from '../data/jobs.ts';
import type { LogRow } from '../data/job-log.ts';

export interface JobLogSource {
  /** The job's progress; undefined while the projector has not seen the job. */
  progress(jobId: string): Promise<JobProgress | undefined>;
  /** Log rows after `afterSeq`, in order, at most `limit`. */
  rowsAfter(jobId: string, afterSeq: number, limit: number): Promise<LogRow[]>;
}

export interface JobLogPollerOptions {
  readonly pollMs: number;
  /** Rows per read. */
  readonly batch?: number;
  /** Offered rows a follower may hold before it drops them and reads for itself. */
  readonly maxPending?: number;
  readonly isTerminal: (status: string) => boolean;
  readonly onError?: (err: unknown) => void;
  /** Called when the last follower left: the hub forgets this poller. */
  readonly onIdle?: () => void;
}

export type FollowerStep =
  | { readonly kind: 'rows'; readonly rows: readonly LogRow[] }
  | { readonly kind: 'end'; readonly progress: JobProgress }
  | { readonly kind: 'idle' };

export class JobLogFollower {
  private pending: LogRow[] = [];
  private wakeUp: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly poller: JobLogPoller,
    /** The last seq handed to the client. */
    private last: number,
  ) {}

  /** The highest seq this follower has, sent or waiting to be. */
  private get highest(): number {
    return this.pending.length > 0 ? this.pending[this.pending.length - 1]!.seq : this.last;
  }

  /** Rows the poller read, in order, starting right after its previous tail. */
  offer(rows: readonly LogRow[], maxPending: number): void {
    if (this.closed || rows.length === 0) return;
    const highest = this.highest;
    // A gap before these rows: this follower is behind and reads for itself.
    if (highest < rows[0]!.seq - 1) return;
    for (const row of rows) if (row.seq > highest) this.pending.push(row);
    if (this.pending.length > maxPending) this.pending = [];
    this.wake();
  }

  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  /** What to send next: rows, the end, or `idle` when nothing came within `waitMs`. */
  async next(waitMs: number, signal: AbortSignal): Promise<FollowerStep> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (signal.aborted || this.closed) return { kind: 'idle' };
      if (this.pending.length > 0) {
        const rows = this.pending;
        this.pending = [];
        this.last = rows[rows.length - 1]!.seq;
        return { kind: 'rows', rows };
      }
      const { tail, progress } = this.poller;
      if (tail !== undefined && this.last < tail) {
        const rows = await this.poller.readOwn(this.last);
        if (rows.length > 0) {
          // Offered rows that arrived while reading may overlap what was read.
          this.pending = this.pending.filter((r) => r.seq > rows[rows.length - 1]!.seq);
          this.last = rows[rows.length - 1]!.seq;
          return { kind: 'rows', rows };
        }
      }
      if (progress && this.poller.isTerminal(progress.status) && this.last >= progress.log_seq) return { kind: 'end', progress };
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'idle' };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        const onAbort = () => done();
        signal.addEventListener('abort', onAbort, { once: true });
        this.wakeUp = done;
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve();
        }
      });
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    this.wake();
    this.poller.remove(this);
  }
}

export class JobLogPoller {
  /** The seq up to which this poller has read (and offered) rows; undefined before its first round. */
  tail: number | undefined;
  /** The progress of the latest round, set after that round's rows were offered. */
  progress: JobProgress | undefined;
  private readonly followers = new Set<JobLogFollower>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly batch: number;
  private readonly maxPending: number;

  constructor(
    readonly jobId: string,
    private readonly source: JobLogSource,
    private readonly options: JobLogPollerOptions,
  ) {
    this.batch = options.batch ?? 500;
    this.maxPending = options.maxPending ?? 2_000;
  }

  get followerCount(): number {
    return this.followers.size;
  }

  isTerminal(status: string): boolean {
    return this.options.isTerminal(status);
  }

  follow(afterSeq: number): JobLogFollower {
    const follower = new JobLogFollower(this, afterSeq);
    this.followers.add(follower);
    if (!this.running && !this.timer) this.schedule(0);
    return follower;
  }

  remove(follower: JobLogFollower): void {
    this.followers.delete(follower);
    if (this.followers.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.options.onIdle?.();
  }

  /** A follower's own read, for when it is behind the shared tail. */
  readOwn(afterSeq: number): Promise<LogRow[]> {
    return this.source.rowsAfter(this.jobId, afterSeq, this.batch);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.round();
    }, ms);
  }

  private async round(): Promise<void> {
    if (this.followers.size === 0) return;
    this.running = true;
    try {
      const before = this.progress;
      const progress = await this.source.progress(this.jobId);
      let moved = false;
      if (this.tail === undefined) {
        // First sight: followers behind this point read their history themselves.
        this.tail = progress?.log_seq ?? 0;
        moved = true;
      } else if (progress) {
        while (this.tail < progress.log_seq && this.followers.size > 0) {
          const rows = await this.source.rowsAfter(this.jobId, this.tail, this.batch);
          if (rows.length === 0) break;
          for (const f of this.followers) f.offer(rows, this.maxPending);
          this.tail = rows[rows.length - 1]!.seq;
          moved = true;
        }
      }
      this.progress = progress;
      if (moved || before?.status !== progress?.status) for (const f of this.followers) f.wake();
    } catch (err) {
      this.options.onError?.(err);
    } finally {
      this.running = false;
      if (this.followers.size > 0) this.schedule(this.options.pollMs);
    }
  }
}

/** The pollers of this API instance, one per job that has a stream open. */
export class JobLogHub {
  private readonly pollers = new Map<string, JobLogPoller>();

  constructor(
    private readonly source: JobLogSource,
    private readonly options: Omit<JobLogPollerOptions, 'onIdle'>,
  ) {}

  get pollerCount(): number {
    return this.pollers.size;
  }

  follow(jobId: string, afterSeq: number): JobLogFollower {
    let poller = this.pollers.get(jobId);
    if (!poller) {
      const created = new JobLogPoller(jobId, this.source, {
        ...this.options,
        onIdle: () => {
          if (this.pollers.get(jobId) === created) this.pollers.delete(jobId);
        },
      });
      this.pollers.set(jobId, created);
      poller = created;
    }
    return poller.follow(afterSeq);
  }
}
