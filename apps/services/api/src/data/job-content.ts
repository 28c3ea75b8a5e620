/**
 * What deleting a job's stored content touches in Postgres: which of its objects no other job still
 * names, the record of deletions (`job_content_deletions`, API migration 3), and which ended jobs'
 * retention has run out. The objects themselves are deleted by content/delete-job-content.ts.
 */
import type { Pool, PoolClient } from '@trawl/store';
import type { ContentRetentionConfig } from '../content/retention.ts';

type Db = Pool | PoolClient;

export type DeletionReason = 'retention' | 'request';

/**
 * The content hashes of a job's pages that no other *live* job's page names: what deleting the
 * job's content may remove from the store without taking a page of another job with it. A job
 * whose own content is deleted or being deleted keeps nothing alive.
 */
export async function contentOnlyOf(db: Db, jobId: string): Promise<string[]> {
  const { rows } = await db.query<{ hash: string }>(
    `WITH mine AS (
       SELECT content_hash AS hash FROM job_pages WHERE job_id = $1 AND content_hash IS NOT NULL
       UNION SELECT f->>'hash' FROM job_pages, jsonb_array_elements(formats) f WHERE job_id = $1
       UNION SELECT d->>'sha256' FROM job_pages, jsonb_array_elements(downloads) d WHERE job_id = $1
     )
     SELECT hash FROM mine m
     WHERE NOT EXISTS (SELECT 1 FROM job_pages p WHERE p.job_id <> $1 AND p.content_hash = m.hash
                         AND NOT EXISTS (SELECT 1 FROM job_content_deletions d WHERE d.job_id = p.job_id))
       AND NOT EXISTS (SELECT 1 FROM job_pages p, jsonb_array_elements(p.formats) f WHERE p.job_id <> $1 AND f->>'hash' = m.hash
                         AND NOT EXISTS (SELECT 1 FROM job_content_deletions d WHERE d.job_id = p.job_id))
       AND NOT EXISTS (SELECT 1 FROM job_pages p, jsonb_array_elements(p.downloads) f WHERE p.job_id <> $1 AND f->>'sha256' = m.hash
                         AND NOT EXISTS (SELECT 1 FROM job_content_deletions d WHERE d.job_id = p.job_id))`,
    [jobId],
  );
  return rows.map((r) => r.hash);
}

/**
 * Claims a job's deletion: true when this caller deletes it now. A user's request always does
 * (again, if asked again); the sweep only takes a job nobody deleted, or a deletion whose process
 * died (started more than `staleMs` ago and never finished).
 */
export async function claimDeletion(db: Db, jobId: string, reason: DeletionReason, staleMs: number): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO job_content_deletions (job_id, reason, started_at) VALUES ($1, $2, now())
     ON CONFLICT (job_id) DO UPDATE SET reason = EXCLUDED.reason, started_at = now(), deleted_at = NULL, deleted_objects = NULL
       WHERE $2 = 'request'
          OR (job_content_deletions.deleted_at IS NULL AND job_content_deletions.started_at < now() - make_interval(secs => $3::double precision / 1000))
     RETURNING job_id`,
    [jobId, reason, staleMs],
  );
  return rows.length > 0;
}

export async function finishDeletion(db: Db, jobId: string, deletedObjects: number): Promise<void> {
  await db.query('UPDATE job_content_deletions SET deleted_at = now(), deleted_objects = $2 WHERE job_id = $1', [jobId, deletedObjects]);
}

export interface DeletionRecord {
  readonly reason: DeletionReason;
  readonly started_at: Date;
  readonly deleted_at: Date | null;
  readonly deleted_objects: number | null;
}

export async function deletionOf(db: Db, jobId: string): Promise<DeletionRecord | undefined> {
  const { rows } = await db.query<DeletionRecord>('SELECT reason, started_at, deleted_at, deleted_objects FROM job_content_deletions WHERE job_id = $1', [jobId]);
  return rows[0];
}

/**
 * Ended jobs whose content has outlived its retention (content/retention.ts: the job's own
 * `content_retention`, else its schedule's, else the default; never past the maximum), oldest
 * first, without a finished or live deletion. Every such job is swept once, content or not, so it
 * is not looked at again.
 */
export async function expiredJobs(db: Db, config: Pick<ContentRetentionConfig, 'defaultSeconds' | 'maxSeconds'>, limit: number, staleMs: number): Promise<string[]> {
  const { rows } = await db.query<{ job_id: string }>(
    `SELECT j.job_id::text AS job_id FROM jobs j
       LEFT JOIN api_jobs a ON a.job_id = j.job_id::text
       LEFT JOIN schedules s ON s.id = j.schedule_id::text
       LEFT JOIN job_content_deletions d ON d.job_id = j.job_id::text
     WHERE j.finished_at IS NOT NULL
       AND (d.job_id IS NULL OR (d.deleted_at IS NULL AND d.started_at < now() - make_interval(secs => $4::double precision / 1000)))
       AND j.finished_at + make_interval(secs => LEAST(
             coalesce((a.request->>'content_retention')::double precision, (s.request->>'content_retention')::double precision, $1), $2)) < now()
     ORDER BY j.finished_at, j.job_id LIMIT $3`,
    [config.defaultSeconds, config.maxSeconds, limit, staleMs],
  );
  return rows.map((r) => r.job_id);
}
