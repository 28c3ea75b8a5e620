/**
 * Which run of a schedule a run is compared against: a pure function of the schedule's runs.
 *
 * The baseline of run J is the schedule's latest run that *finished* (JobCompleted, outcome
 * finished) before J started (was dispatched). Failed and cancelled runs are skipped: they stopped
 * part-way, and against them most pages would look new. "Before J started" rather than "dispatched
 * before J" makes the choice final once J has started: a run still going then (overlap `allow`)
 * ends after J's start, so it can never become J's baseline later.
 *
 * The choice is only as good as the read model it is made on, so it is also said whether it is
 * *settled*, i.e. can no longer change as projector-pg catches up:
 *
 * - a run that started before J and has not ended in the read model may have ended before J
 *   started with its end not projected yet (it could be the baseline); it unsettles the choice;
 * - the baseline's pages must all be projected: a finished run has as many page rows as URLs its
 *   JobCompleted saw (each ends in exactly one PageFetched or PageFailed).
 *
 * Times are the events' own (`occurred_at`, as projected), so a read model rebuilt by replay makes
 * the same choice.
 */

/** What the choice needs of a run (a `jobs` row, with its page rows counted). */
export interface ScheduleRun {
  readonly job_id: string;
  readonly status: 'pending' | 'running' | 'paused' | 'finished' | 'failed' | 'cancelled';
  /** When the run started: dispatched, else its first page, else requested. */
  readonly started_at: Date | null;
  /** When it ended (finished, failed or cancelled); null while it runs. */
  readonly ended_at: Date | null;
  /** Its JobCompleted's `urls_seen` (null before it completed). */
  readonly completed_urls_seen: number | null;
  /** Its rows in `job_pages`. */
  readonly pages_recorded: number;
}

export interface Baseline {
  /** The run compared against; null for the schedule's first finished run. */
  readonly previous: ScheduleRun | null;
  /** False while projector-pg may still change the answer; `waiting_for` says why. */
  readonly settled: boolean;
  readonly waiting_for: readonly string[];
}

const ENDED = new Set<ScheduleRun['status']>(['finished', 'failed', 'cancelled']);

function later(a: ScheduleRun, b: ScheduleRun): boolean {
  const d = a.ended_at!.getTime() - b.ended_at!.getTime();
  if (d !== 0) return d > 0;
  const s = (a.started_at?.getTime() ?? 0) - (b.started_at?.getTime() ?? 0);
  return s !== 0 ? s > 0 : a.job_id > b.job_id;
}

/**
 * The baseline of the run `current` among `runs` (the schedule's runs; any superset of the latest
 * finished one before `current` started and of those started before it and not ended gives the
 * same answer). A run whose start is unknown is compared against nothing yet, unsettled.
 */
export function baselineOf(current: Pick<ScheduleRun, 'job_id' | 'started_at'>, runs: readonly ScheduleRun[]): Baseline {
  const start = current.started_at?.getTime();
  if (start === undefined) return { previous: null, settled: false, waiting_for: [`${current.job_id} (not started in the read model)`] };
  let previous: ScheduleRun | null = null;
  const waiting: string[] = [];
  for (const run of runs) {
    if (run.job_id === current.job_id) continue;
    if (!ENDED.has(run.status)) {
      if (run.started_at !== null && run.started_at.getTime() < start) waiting.push(`${run.job_id} (started before, not ended)`);
      continue;
    }
    if (run.status !== 'finished' || run.ended_at === null || run.ended_at.getTime() >= start) continue;
    if (!previous || later(run, previous)) previous = run;
  }
  if (previous && (previous.completed_urls_seen === null || previous.pages_recorded < previous.completed_urls_seen)) {
    waiting.push(`${previous.job_id} (${previous.pages_recorded} of ${previous.completed_urls_seen ?? '?'} pages projected)`);
  }
  return { previous, settled: waiting.length === 0, waiting_for: waiting };
}

/**
 * A baseline named rather than chosen: `GET /jobs/:id/changes?against=<job>`, or the job a
 * re-extraction parsed again. Any run of the user compares, whatever its schedule and whenever it
 * ran; the answer is settled once that run has ended (as finished) with all its pages projected.
 * A run that failed or was cancelled compares too (it is the one asked for), its pages as far as
 * they got, and is settled once ended.
 */
export function namedBaseline(run: ScheduleRun): Baseline {
  if (!ENDED.has(run.status)) return { previous: run, settled: false, waiting_for: [`${run.job_id} (not ended)`] };
  if (run.status === 'finished' && (run.completed_urls_seen === null || run.pages_recorded < run.completed_urls_seen)) {
    return { previous: run, settled: false, waiting_for: [`${run.job_id} (${run.pages_recorded} of ${run.completed_urls_seen ?? '?'} pages projected)`] };
  }
  return { previous: run, settled: true, waiting_for: [] };
}
