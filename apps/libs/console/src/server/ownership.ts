/**
 * Who owns a job, from Postgres: the read model (`jobs`, projector-pg) and the API's own record of
 * jobs it accepted (`api_jobs`, so a job is the caller's from the instant POST /crawl answers).
 * Two queries, never a join: their id column types are not ours to assume.
 */
import type { Pool } from '@trawl/store';

/** A missing table means that part of the model is not set up yet: it owns nothing. */
function orNothing(err: unknown): { rows: { job_id: string; status: string | null }[] } {
  if ((err as { code?: string }).code === '42P01') return { rows: [] };
  throw err;
}

/** The jobs among `jobIds` that belong to `userId`, with their status (null: accepted, not projected yet). */
export async function ownedJobs(db: Pool, userId: string, jobIds: readonly string[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(jobIds)];
  if (ids.length === 0) return new Map();
  const [projected, accepted] = await Promise.all([
    db.query<{ job_id: string; status: string | null }>('SELECT job_id::text AS job_id, status FROM jobs WHERE user_id = $1 AND job_id = ANY($2)', [userId, ids]).catch(orNothing),
    db.query<{ job_id: string; status: string | null }>('SELECT job_id, NULL AS status FROM api_jobs WHERE user_id = $1 AND job_id = ANY($2)', [userId, ids]).catch(orNothing),
  ]);
  const out = new Map<string, string | null>();
  for (const r of accepted.rows) out.set(r.job_id, null);
  for (const r of projected.rows) out.set(r.job_id, r.status);
  return out;
}

/** The ids among `jobIds` that belong to `userId`. */
export async function ownedJobIds(db: Pool, userId: string, jobIds: readonly string[]): Promise<Set<string>> {
  return new Set((await ownedJobs(db, userId, jobIds)).keys());
}

export async function ownsJob(db: Pool, userId: string, jobId: string): Promise<boolean> {
  return (await ownedJobIds(db, userId, [jobId])).has(jobId);
}
