/**
 * The crawl dedupe entries (`crawl_dedupe`, created by the API's migrations): per user and dedupe
 * key, the job that answers an identical crawl until `expires_at`. The API claims an entry for every
 * immediate crawl (apps/services/api submit-crawl.ts); the dispatcher claims one for each run of a
 * schedule with `dedupe`, through `claimDedupe`, by the same rule: Postgres's row lock orders
 * concurrent claims, and an unexpired entry of another job wins.
 */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

/** `TRAWL_DEDUPE_TTL`: seconds an identical crawl is answered from the job before it (default 3600; 0: no dedupe). */
export function dedupeTtlFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_DEDUPE_TTL;
  if (raw === undefined || raw === '') return 3_600;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`TRAWL_DEDUPE_TTL must be a whole number of seconds ≥ 0, got "${raw}"`);
  return n;
}

/** Whether the database holds the dedupe entries (a bare dispatcher database does not). */
export async function hasCrawlDedupe(db: Db): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>("SELECT to_regclass('crawl_dedupe') IS NOT NULL AS present");
  return rows[0]!.present;
}

export interface DedupeClaim {
  readonly userId: string;
  readonly key: string;
  /** The job that will answer identical crawls if the claim is taken. */
  readonly jobId: string;
  readonly ttlSeconds: number;
  /** Jobs whose unexpired entry this claim may still replace (the claimer's own earlier runs). */
  readonly replaces?: readonly string[];
}

export type DedupeClaimResult =
  | { readonly claimed: true }
  /** An unexpired entry of another job: the crawl is answered from it. */
  | { readonly claimed: false; readonly job_id: string; readonly created_at: Date };

/**
 * Makes `jobId` the answer to identical crawls of the user for `ttlSeconds`, unless an unexpired
 * entry of another job (not in `replaces`) holds the key: then that job is the answer. In the
 * caller's transaction; the time is the database's, as the API's claims use.
 */
export async function claimDedupe(tx: PoolClient, c: DedupeClaim): Promise<DedupeClaimResult> {
  const claimed = await tx.query(
    `INSERT INTO crawl_dedupe (user_id, dedupe_key, job_id, created_at, expires_at)
     VALUES ($1, $2, $3, now(), now() + make_interval(secs => $4))
     ON CONFLICT (user_id, dedupe_key) DO UPDATE
       SET job_id = EXCLUDED.job_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE crawl_dedupe.expires_at <= now() OR crawl_dedupe.job_id = ANY($5::text[])
     RETURNING job_id`,
    [c.userId, c.key, c.jobId, c.ttlSeconds, [c.jobId, ...(c.replaces ?? [])]],
  );
  if (claimed.rows.length > 0) return { claimed: true };
  const { rows } = await tx.query<{ job_id: string; created_at: Date }>('SELECT job_id, created_at FROM crawl_dedupe WHERE user_id = $1 AND dedupe_key = $2', [c.userId, c.key]);
  // The row is locked by the failed upsert for the rest of the transaction, so it is still there.
  return { claimed: false, job_id: rows[0]!.job_id, created_at: rows[0]!.created_at };
}
