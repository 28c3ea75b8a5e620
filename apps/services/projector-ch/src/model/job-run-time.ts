/**
 * A job's run time from its job events, paused time left out: the rule the analytics read
 * `job_events` with (`jobRunTimes`), pure so that it is tested without ClickHouse.
 *
 * The events are taken in log order (a job's events share its key, hence one partition of
 * `trawl.jobs`, where the offset is the order), as the frontier applies them:
 *
 * - the job starts at its first JobDispatched (the earliest in time: a second dispatch attempt
 *   does not restart it);
 * - a JobPaused pauses a job that is not paused; another one while it is paused changes nothing
 *   (the API may emit one twice, the frontier absorbs it);
 * - a JobResumed ends the pause; one without a pause changes nothing;
 * - the first JobCompleted or JobFailed ends the job, and a pause with it; what follows changes
 *   nothing (the frontier's end is final).
 *
 * Paused time counts only within the run, from its start to its end: a job paused before its
 * dispatch was read (it starts paused) counts its pause from its start. A job still paused counts
 * its pause until `now`. Times are whole seconds, the facts' `DateTime`.
 */

export interface JobTimeEvent {
  /** `JobDispatched`, `JobPaused`, `JobResumed`, `JobCompleted`, `JobFailed`; others are ignored. */
  readonly event: string;
  /** JobCompleted's outcome (`finished`, `cancelled`), else ''. */
  readonly outcome: string;
  /** Unix seconds. */
  readonly at: number;
  /** The event's place in its partition: the order in which it was applied. */
  readonly offset: bigint;
}

export type JobRunStatus = 'pending' | 'running' | 'paused' | 'finished' | 'cancelled' | 'failed';

export interface JobRunTime {
  readonly job_id: string;
  readonly status: JobRunStatus;
  /** Unix seconds of its first dispatch; null when none is stored (yet). */
  readonly started_at: number | null;
  /** Unix seconds of its end; null while it runs. */
  readonly ended_at: number | null;
  /** Pauses that took effect (a pause asked again while paused is not one). */
  readonly pauses: number;
  /** Seconds paused within the run (until `now` while it is paused). */
  readonly paused_seconds: number;
  /** Seconds from start to end, paused time left out; null while it runs. */
  readonly active_seconds: number | null;
}

export function jobRunTime(jobId: string, events: readonly JobTimeEvent[], now: number): JobRunTime {
  const dispatches = events.filter((e) => e.event === 'JobDispatched').map((e) => e.at);
  const started = dispatches.length > 0 ? Math.min(...dispatches) : null;
  let pausedSince: number | null = null;
  let pausedSeconds = 0;
  let pauses = 0;
  let ended: number | null = null;
  let outcome: JobRunStatus | null = null;
  // Seconds of [from, to] within the run: after its start (a job without one has no run yet).
  const within = (from: number, to: number) => (started === null ? 0 : Math.max(0, to - Math.max(from, started)));
  for (const e of [...events].sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0))) {
    if (ended !== null) break;
    switch (e.event) {
      case 'JobPaused':
        if (pausedSince === null) {
          pausedSince = e.at;
          pauses++;
        }
        break;
      case 'JobResumed':
        if (pausedSince !== null) {
          pausedSeconds += within(pausedSince, e.at);
          pausedSince = null;
        }
        break;
      case 'JobCompleted':
      case 'JobFailed':
        ended = e.at;
        outcome = e.event === 'JobFailed' ? 'failed' : e.outcome === 'cancelled' ? 'cancelled' : 'finished';
        if (pausedSince !== null) {
          pausedSeconds += within(pausedSince, e.at);
          pausedSince = null;
        }
        break;
    }
  }
  if (pausedSince !== null) pausedSeconds += within(pausedSince, now);
  const status: JobRunStatus = outcome ?? (pausedSince !== null ? 'paused' : started !== null ? 'running' : 'pending');
  const active = ended !== null && started !== null ? Math.max(0, ended - started - pausedSeconds) : null;
  return { job_id: jobId, status, started_at: started, ended_at: ended, pauses, paused_seconds: pausedSeconds, active_seconds: active };
}

/** The events of many jobs (any order) → each job's run time, by job id. */
export function jobRunTimesOf(events: readonly (JobTimeEvent & { readonly job_id: string })[], now: number): JobRunTime[] {
  const byJob = new Map<string, JobTimeEvent[]>();
  for (const e of events) {
    let list = byJob.get(e.job_id);
    if (!list) byJob.set(e.job_id, (list = []));
    list.push(e);
  }
  return [...byJob].map(([id, list]) => jobRunTime(id, list, now)).sort((a, b) => a.job_id.localeCompare(b.job_id));
}
