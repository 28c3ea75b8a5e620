/**
 * What a user keeps in the content store, against their `storage_bytes` quota: the bytes of page
 * content their jobs' events name, read from projector-pg's read model (`jobs`, `job_pages`), so
 * the figure comes from the log and a replay gives it again.
 *
 * - A page counts the uncompressed size of what it stored: its body (the `html` format's size,
 *   else the page's `bytes`) unless the body was reused from the HTTP cache (`from_cache`: the job
 *   that fetched it counted it), plus each other format it kept. Objects are gzipped and shared
 *   between pages with the same bytes, so this bounds the disk used from above; a body fetched in
 *   full again by a later job counts again, since that job keeps it alive too.
 * - A job whose content is deleted (`job_content_deletions`, by retention or on request; from the
 *   moment the deletion is claimed) counts nothing: retention frees quota.
 * - A job over for SETTLE_AFTER_MS is summed once and kept in `job_content_usage` (its pages no
 *   longer change; the wait covers a read model that saw the job end before its last pages), so a
 *   user with months of jobs costs one row per job, not a scan of every page; running and newly
 *   ended jobs are summed from their pages on each read.
 *
 * The tables of other packages are looked up first: without the read model nothing is counted
 * (nothing can be attributed), without the API's deletions nothing is deleted.
 */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

/** How long after its end a job's content bytes are summed for good. */
export const SETTLE_AFTER_MS = 5 * 60_000;

/** The bytes one `job_pages` row (alias p) keeps in the content store. */
const PAGE_BYTES = `(
  CASE WHEN p.content_hash IS NULL OR p.from_cache IS NOT NULL THEN 0
       ELSE coalesce((SELECT (f->>'bytes')::bigint FROM jsonb_array_elements(p.formats) f WHERE f->>'hash' = p.content_hash LIMIT 1), p.bytes) END
  + coalesce((SELECT sum((f->>'bytes')::bigint) FROM jsonb_array_elements(p.formats) f WHERE f->>'hash' IS DISTINCT FROM p.content_hash), 0)
  + coalesce((SELECT sum((d->>'bytes')::bigint) FROM jsonb_array_elements(p.downloads) d), 0))`;

function usageSql(deletions: boolean): string {
  const notDeleted = deletions ? 'AND NOT EXISTS (SELECT 1 FROM job_content_deletions d WHERE d.job_id = j.job_id)' : '';
  return `
    WITH owned AS (
      SELECT j.job_id, j.user_id, j.finished_at FROM jobs j WHERE j.user_id = ANY($1::text[]) ${notDeleted}
    ),
    settled AS (
      SELECT o.user_id, s.bytes FROM owned o JOIN job_content_usage s ON s.job_id = o.job_id
    ),
    open AS (
      SELECT o.job_id, o.user_id, o.finished_at,
        (SELECT coalesce(sum(${PAGE_BYTES}), 0) FROM job_pages p WHERE p.job_id = o.job_id)::bigint AS bytes
      FROM owned o WHERE NOT EXISTS (SELECT 1 FROM job_content_usage s WHERE s.job_id = o.job_id)
    ),
    settle AS (
      INSERT INTO job_content_usage (job_id, user_id, bytes)
      SELECT job_id, user_id, bytes FROM open
      WHERE finished_at < $2::timestamptz - make_interval(secs => $3::double precision / 1000)
      ON CONFLICT (job_id) DO NOTHING
    )
    SELECT user_id, sum(bytes)::bigint AS bytes
    FROM (SELECT user_id, bytes FROM settled UNION ALL SELECT user_id, bytes FROM open) AS all_jobs
    GROUP BY user_id`;
}

async function present(db: Db, tables: readonly string[]): Promise<boolean[]> {
  const { rows } = await db.query<{ ok: boolean[] }>('SELECT array_agg(to_regclass(t) IS NOT NULL ORDER BY n) AS ok FROM unnest($1::text[]) WITH ORDINALITY AS x(t, n)', [tables]);
  return rows[0]!.ok;
}

/** The content bytes each user's jobs keep now (0 for a user with none), settling jobs long over. */
export async function readStorageUsage(db: Db, userIds: readonly string[], now: Date = new Date()): Promise<Map<string, number>> {
  const users = [...new Set(userIds)];
  const out = new Map<string, number>(users.map((u) => [u, 0]));
  if (users.length === 0) return out;
  const [jobs, pages, deletions] = await present(db, ['jobs', 'job_pages', 'job_content_deletions']);
  if (!jobs || !pages) return out;
  const { rows } = await db.query<{ user_id: string; bytes: string }>(usageSql(deletions!), [users, now, SETTLE_AFTER_MS]);
  for (const r of rows) out.set(r.user_id, Number(r.bytes));
  return out;
}

/**
 * The user a job belongs to: the quota ledger's (written when the job started), else the read
 * model's; undefined while neither knows it.
 */
export async function jobOwner(db: Db, jobId: string): Promise<string | undefined> {
  const [ledger, jobs] = await present(db, ['job_quota_ledger', 'jobs']);
  const sources = [ledger ? 'SELECT user_id, 1 AS rank FROM job_quota_ledger WHERE job_id = $1' : '', jobs ? 'SELECT user_id, 2 FROM jobs WHERE job_id = $1 AND user_id IS NOT NULL' : ''].filter(Boolean);
  if (sources.length === 0) return undefined;
  const { rows } = await db.query<{ user_id: string }>(`${sources.join(' UNION ALL ')} ORDER BY 2 LIMIT 1`, [jobId]);
  return rows[0]?.user_id;
}
