/**
 * What a re-extraction needs of its source job, read from projector-pg's read models (READ-MODEL.md:
 * `jobs`, `job_pages`, `http_cache`) in one statement: its status and spec, whether all its pages
 * are recorded, and how many of its fetched pages have a stored body — their own (`content_hash`)
 * or the user's HTTP cache entry of the URL — which is what the frontier will find for them.
 */
import type { CrawlSpec } from '@trawl/schemas';
import type { Pool, PoolClient } from '@trawl/store';

export interface ReextractSourceRow {
  readonly job_id: string;
  readonly status: string;
  readonly spec: CrawlSpec | null;
  readonly spider: string | null;
  readonly start_urls: readonly string[] | null;
  readonly params: Readonly<Record<string, string>> | null;
  /** Pages the job ended with (its JobCompleted's urls_seen, else its counters). */
  readonly pages_expected: number;
  /** Its rows in job_pages. */
  readonly pages_recorded: number;
  /** Of them, fetched (ok). */
  readonly pages_fetched: number;
  /** Of those, with a stored body (the page's own or the HTTP cache's). */
  readonly pages_stored: number;
}

/** The caller's job as a re-extraction's source, or undefined (unknown, somebody else's, or not projected yet). */
export async function reextractSource(db: Pool | PoolClient, jobId: string, userId: string): Promise<ReextractSourceRow | undefined> {
  const { rows } = await db.query<ReextractSourceRow>(
    `SELECT j.job_id::text AS job_id, j.status, j.spec, j.spider, j.start_urls, j.params,
            coalesce(j.completed_urls_seen, coalesce(j.pages_fetched, 0) + coalesce(j.pages_failed, 0))::int AS pages_expected,
            (SELECT count(*)::int FROM job_pages p WHERE p.job_id = j.job_id) AS pages_recorded,
            (SELECT count(*)::int FROM job_pages p WHERE p.job_id = j.job_id AND p.ok) AS pages_fetched,
            (SELECT count(*)::int FROM job_pages p LEFT JOIN http_cache c ON c.user_id = j.user_id AND c.url = p.url
              WHERE p.job_id = j.job_id AND p.ok AND (p.content_hash IS NOT NULL OR c.content_hash IS NOT NULL)) AS pages_stored
       FROM jobs j WHERE j.job_id = $1 AND j.user_id = $2`,
    [jobId, userId],
  );
  return rows[0];
}
