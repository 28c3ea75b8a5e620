/**
 * Each job's run time with its paused time left out, and its status, from the job events
 * (`job_events`: dispatch, pauses, resumes and the end). The SQL only reads the events, one row per
 * event id (its first copy in log order, as the facts keep it); the rule that turns them into
 * times is `jobRunTime` (model/job-run-time.ts). Plain SQL that 18.16 and current releases answer
 * alike; aliases differ from column names (18.16 resolves a name to a same-SELECT alias first).
 */
import { type ClickHouse, quote } from '@trawl/clickhouse';
import { jobRunTimesOf, type JobRunTime } from '../model/job-run-time.ts';

export type { JobRunTime, JobRunStatus } from '../model/job-run-time.ts';

const TIMED = ['JobDispatched', 'JobPaused', 'JobResumed', 'JobCompleted', 'JobFailed'];

/** Run times of `jobIds` (default every job with events), a still-paused job's pause counted until `now`. */
export async function jobRunTimes(ch: ClickHouse, jobIds?: readonly string[], now: Date = new Date()): Promise<JobRunTime[]> {
  const jobs = jobIds ? ` AND job_id IN (${jobIds.map(quote).join(', ') || "''"})` : '';
  const rows = await ch.rows<{ j: string; ev: string; oc: string; t: number | string; o: string }>(`
    SELECT any(job_id) AS j, any(event) AS ev, argMin(outcome, _offset) AS oc, toUInt32(argMin(ts, _offset)) AS t, toString(min(_offset)) AS o
    FROM job_events
    WHERE event IN (${TIMED.map(quote).join(', ')})${jobs}
    GROUP BY event_id`);
  return jobRunTimesOf(
    rows.map((r) => ({ job_id: r.j, event: r.ev, outcome: r.oc, at: Number(r.t), offset: BigInt(r.o) })),
    Math.floor(now.getTime() / 1_000),
  );
}
