/**
 * Rows of the read models written straight into the test database, in the shape projector-pg
 * writes them (READ-MODEL.md), so the read endpoints can be tested on known content.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from '@trawl/store';

export interface SeedJob {
  readonly job_id?: string;
  readonly user_id: string;
  readonly status?: 'pending' | 'running' | 'finished' | 'failed' | 'cancelled';
  readonly schedule_id?: string | null;
  readonly requested_at?: Date;
  readonly pages_fetched?: number;
  readonly log_seq?: number;
  /** The status view's counters projector-pg keeps on the row (its model/job-counters.ts). */
  readonly counters?: { readonly pages_blocked?: number; readonly duplicates?: number; readonly sessions_replaced?: number };
}

export async function seedJob(pool: Pool, job: SeedJob): Promise<string> {
  const id = job.job_id ?? randomUUID();
  const requested = job.requested_at ?? new Date();
  await pool.query(
    `INSERT INTO jobs (job_id, user_id, schedule_id, status, start_urls, search_url, requested_at, dispatched_at, finished_at,
       pages_fetched, pages_failed, items_extracted, bytes, urls_seen, log_seq, pages_blocked, duplicates, sessions_replaced, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, 1, 3, 12345, 10, $10, $11, $12, $13, now())`,
    [id, job.user_id, job.schedule_id ?? null, job.status ?? 'running', JSON.stringify(['http://a.test/']), 'http://a.test/', requested,
      ['finished', 'failed', 'cancelled'].includes(job.status ?? '') ? new Date(requested.getTime() + 5_000) : null, job.pages_fetched ?? 2, job.log_seq ?? 0,
      job.counters?.pages_blocked ?? 0, job.counters?.duplicates ?? 0, job.counters?.sessions_replaced ?? 0],
  );
  return id;
}

export async function seedPages(pool: Pool, jobId: string, count: number, start = new Date('2030-01-01T00:00:00Z')): Promise<void> {
  for (let i = 0; i < count; i++) {
    await pool.query(
      `INSERT INTO job_pages (job_id, fetch_id, url, final_url, status, content_type, bytes, fetch_ms, depth, render_mode, links_count,
         item_count, ok, error_code, error_message, attempts, fetched_at, event_id)
       VALUES ($1, $2, $3, $3, $4, 'text/html', 100, 12, 1, 'http', 3, 1, $5, $6, $7, 1, $8, $9)`,
      [jobId, `f${String(i).padStart(4, '0')}`, `http://a.test/p${i}`, i % 4 === 3 ? 500 : 200, i % 4 !== 3,
        i % 4 === 3 ? 'HTTP_500' : null, i % 4 === 3 ? 'server error' : null, new Date(start.getTime() + i * 1000), randomUUID()],
    );
  }
}

export async function seedItems(pool: Pool, jobId: string, items: readonly Record<string, string>[]): Promise<void> {
  let i = 0;
  for (const fields of items) {
    await pool.query(
      `INSERT INTO job_items (job_id, item_key, fetch_id, url, fields, extracted_at, event_id) VALUES ($1, $2, 'f0', $3, $4, $5, $6)`,
      [jobId, `k${String(i).padStart(4, '0')}`, `http://a.test/i${i}`, JSON.stringify(fields), new Date(Date.UTC(2030, 0, 1, 0, 0, i)), randomUUID()],
    );
    i++;
  }
}

/** Appends log lines the way the projector does: seq from jobs.log_seq under the job row's lock. */
export async function appendLog(pool: Pool, jobId: string, lines: readonly { msg: string; level?: string }[], finalStatus?: string): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ log_seq: number }>('SELECT log_seq FROM jobs WHERE job_id = $1 FOR UPDATE', [jobId]);
    let seq = rows[0]!.log_seq;
    for (const line of lines) {
      seq++;
      await client.query(
        `INSERT INTO job_log (job_id, seq, ts, level, msg, event, event_id, data) VALUES ($1, $2, now(), $3, $4, 'PageFetched', $5, $6)`,
        [jobId, seq, line.level ?? 'info', line.msg, randomUUID(), JSON.stringify({ n: seq })],
      );
    }
    await client.query(
      `UPDATE jobs SET log_seq = $2, status = coalesce($3, status), finished_at = CASE WHEN $3::text IS NULL THEN finished_at ELSE now() END,
         updated_at = now() WHERE job_id = $1`,
      [jobId, seq, finalStatus ?? null],
    );
    await client.query('COMMIT');
    return seq;
  } finally {
    client.release();
  }
}
