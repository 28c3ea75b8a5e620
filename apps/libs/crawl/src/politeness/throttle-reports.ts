/**
 * When the adaptive throttle's choice for a job on a host is worth telling the job (PageFetched's
 * `throttle`, the job's log and view): the metrics show it per host as it is, but a user looks at
 * their job, and a job view that moved on every answer would flood the log of a long crawl.
 *
 * So a (job, host) setting is said when it moved by a meaningful margin since it was last said:
 *  - its first value;
 *  - any change of concurrency (a step of the window: the throttle moves it rarely, and each step
 *    is the news — the site took more, or failed at this level);
 *  - a change of the delay by at least `delayChange` of the last said (25%) and at least
 *    `minDelayChangeMs` (20 ms; so 0 → 3 ms is not news);
 * and at most `maxPerJob` times per job (100) on this worker: past that the job keeps its last
 * said values, and the metrics still show the live ones.
 *
 * State is per worker: each worker steers its own fetches (auto-throttle.ts), so each says its own
 * choice; a restarted worker says a host's setting again as a first value.
 */
import type { ThrottleChoice } from './auto-throttle.ts';

/** A setting as a job is told it (PageFetched.throttle). */
export interface ThrottleSettingReport {
  readonly host: string;
  readonly delay_ms: number;
  readonly concurrency: number;
}

export interface ThrottleReportOptions {
  /** The delay's relative change that is news (default 0.25). */
  readonly delayChange?: number;
  /** … and its least absolute change, in ms (default 20). */
  readonly minDelayChangeMs?: number;
  /** Settings said per job (default 100). */
  readonly maxPerJob?: number;
  /** Jobs remembered before the least recently told is forgotten (default 1,000). */
  readonly maxJobs?: number;
}

interface Said {
  readonly delayMs: number;
  readonly concurrency: number;
}

/** Whether `next` is worth saying after `last` (null: never said). Pure. */
export function worthReporting(last: Said | null, next: Said, options: Pick<ThrottleReportOptions, 'delayChange' | 'minDelayChangeMs'> = {}): boolean {
  if (last === null) return true;
  if (next.concurrency !== last.concurrency) return true;
  const moved = Math.abs(next.delayMs - last.delayMs);
  return moved >= Math.max((options.delayChange ?? 0.25) * last.delayMs, options.minDelayChangeMs ?? 20);
}

export class ThrottleReports {
  private readonly jobs = new Map<string, { count: number; hosts: Map<string, Said> }>();
  private readonly maxPerJob: number;
  private readonly maxJobs: number;

  constructor(private readonly options: ThrottleReportOptions = {}) {
    this.maxPerJob = Math.max(0, options.maxPerJob ?? 100);
    this.maxJobs = Math.max(1, options.maxJobs ?? 1_000);
  }

  /** The setting to put on the job's next PageFetched for this choice, or null when it is no news (or the job was told enough). */
  take(choice: ThrottleChoice | null): ThrottleSettingReport | null {
    if (!choice) return null;
    let job = this.jobs.get(choice.jobId);
    if (job) this.jobs.delete(choice.jobId);
    else {
      if (this.jobs.size >= this.maxJobs) this.jobs.delete(this.jobs.keys().next().value!);
      job = { count: 0, hosts: new Map() };
    }
    this.jobs.set(choice.jobId, job);
    if (job.count >= this.maxPerJob) return null;
    const next = { delayMs: choice.delayMs, concurrency: choice.concurrency };
    if (!worthReporting(job.hosts.get(choice.host) ?? null, next, this.options)) return null;
    job.hosts.set(choice.host, next);
    job.count++;
    return { host: choice.host, delay_ms: choice.delayMs, concurrency: choice.concurrency };
  }

  /** Forgets a job (it ended). */
  forgetJob(jobId: string): void {
    this.jobs.delete(jobId);
  }
}
