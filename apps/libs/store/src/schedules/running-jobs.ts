/**
 * Which of a set of jobs are still going, for the overlap policy: the dispatcher asks it for the
 * previous jobs of the schedules it is about to fire.
 *
 * A job is going while projector-pg's `jobs` shows it pending, running or paused — and also while
 * `jobs` does not show it at all. Every id asked about is a job a schedule has dispatched (its
 * `last_job_id`, written in the transaction that follows the acknowledged JobDispatched), so a job
 * missing from the read model is one whose JobDispatched is not projected yet: it has not ended
 * as far as anything can tell, and a slot coming meanwhile must not start a second job beside it.
 * The quota ledger reads the read model by the same rule (a job counts as active until `jobs`
 * shows it over). The price: while projector-pg is behind or down, `skip` schedules skip and
 * `queue` schedules wait, rather than risk two runs at once.
 *
 * Without the read model (a bare dispatcher database, no `jobs` table) nothing can be seen to end,
 * and nothing holds a slot back.
 */
import type { Pool, PoolClient } from 'pg';

const GOING = new Set(['pending', 'running', 'paused']);

/** What a job missing from the read model is reported as (the skip reason shows it). */
export const NOT_PROJECTED = 'dispatched, not in the jobs read model yet';

export async function runningJobs(db: Pool | PoolClient, jobIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (jobIds.length === 0) return out;
  const { rows: present } = await db.query<{ present: boolean }>("SELECT to_regclass('jobs') IS NOT NULL AS present");
  if (!present[0]!.present) return out;
  const ids = [...new Set(jobIds)];
  const { rows } = await db.query<{ job_id: string; status: string }>('SELECT job_id, status FROM jobs WHERE job_id = ANY($1::text[])', [ids]);
  const status = new Map(rows.map((r) => [r.job_id, r.status]));
  for (const id of ids) {
    const s = status.get(id);
    if (s === undefined) out.set(id, NOT_PROJECTED);
    else if (GOING.has(s)) out.set(id, s);
  }
  return out;
}
