/**
 * The reads change tracking makes of projector-pg's read models (`jobs`, `job_pages`, `job_items`;
 * apps/services/projector-pg/READ-MODEL.md). Read only, by these table names, so a replay's swap
 * is seen at the next query.
 */
import type pg from 'pg';
import type { ScheduleRun } from './baseline.ts';
import type { RunItem } from './compare-items.ts';
import type { RunPage } from './compare-pages.ts';

export type Db = Pick<pg.ClientBase, 'query'>;

/** A run with its schedule (null: not started by a schedule, or its JobDispatched not projected yet). */
export interface RunRow extends ScheduleRun {
  readonly schedule_id: string | null;
  /**
   * Its JobDispatched's time. A row can exist before its JobDispatched is projected (a page event
   * read first); until then its schedule is unknown, and it is compared against nothing yet.
   */
  readonly dispatched_at: Date | null;
}

const RUN_COLUMNS = `job_id::text AS job_id, schedule_id::text AS schedule_id, status, dispatched_at,
  coalesce(dispatched_at, first_page_at, requested_at) AS started_at, finished_at AS ended_at, completed_urls_seen`;

const PAGES_RECORDED = `CASE WHEN status = 'finished' THEN (SELECT count(*)::int FROM job_pages p WHERE p.job_id = c.job_id) ELSE 0 END`;

export async function runOf(db: Db, jobId: string): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS}, 0 AS pages_recorded FROM jobs WHERE job_id::text = $1`, [jobId]);
  return rows[0];
}

/**
 * The runs of a schedule that can decide the baseline of a run started at `startedAt` (baseline.ts):
 * the latest finished before it, and those started before it that have not ended. Both come from
 * the `jobs (schedule_id)` index, however many runs the schedule has had.
 */
export async function candidateRuns(db: Db, scheduleId: string, jobId: string, startedAt: Date): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>(
    `WITH c AS (
       (SELECT ${RUN_COLUMNS} FROM jobs
        WHERE schedule_id::text = $1 AND job_id::text <> $2 AND status = 'finished' AND finished_at < $3
        ORDER BY finished_at DESC, coalesce(dispatched_at, first_page_at, requested_at) DESC, job_id::text DESC LIMIT 1)
       UNION ALL
       (SELECT ${RUN_COLUMNS} FROM jobs
        WHERE schedule_id::text = $1 AND job_id::text <> $2 AND status IN ('pending', 'running', 'paused')
          AND coalesce(dispatched_at, first_page_at, requested_at) < $3)
     )
     SELECT c.*, ${PAGES_RECORDED} AS pages_recorded FROM c`,
    [scheduleId, jobId, startedAt],
  );
  return rows;
}

export async function pagesOf(db: Db, jobId: string): Promise<RunPage[]> {
  const { rows } = await db.query<RunPage>('SELECT fetch_id::text AS fetch_id, url, ok, content_hash FROM job_pages WHERE job_id::text = $1', [jobId]);
  return rows;
}

export async function pageOf(db: Db, jobId: string, fetchId: string): Promise<RunPage | undefined> {
  const { rows } = await db.query<RunPage>(
    'SELECT fetch_id::text AS fetch_id, url, ok, content_hash FROM job_pages WHERE job_id::text = $1 AND fetch_id::text = $2',
    [jobId, fetchId],
  );
  return rows[0];
}

export async function itemsOf(db: Db, jobId: string): Promise<RunItem[]> {
  const { rows } = await db.query<RunItem>('SELECT item_key, url, fields FROM job_items WHERE job_id::text = $1', [jobId]);
  return rows;
}
