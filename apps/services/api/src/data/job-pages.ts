import type { Pool, PoolClient } from '@trawl/store';
import { sortAt } from '../http/cursor.ts';

type Db = Pool | PoolClient;

export interface PageRow {
  readonly fetch_id: string;
  readonly url: string;
  readonly final_url: string | null;
  readonly status: number | null;
  readonly content_type: string | null;
  readonly bytes: number | null;
  readonly fetch_ms: number | null;
  readonly depth: number | null;
  readonly render_mode: string | null;
  readonly links_count: number | null;
  readonly item_count: number | null;
  readonly ok: boolean;
  readonly error_code: string | null;
  readonly error_message: string | null;
  readonly attempts: number | null;
  readonly fetched_at: Date;
  readonly content_hash: string | null;
  readonly formats: readonly { readonly format: string; readonly hash: string; readonly bytes: number }[];
  /** The linked files kept for the page (CrawlSpec.downloads). */
  readonly downloads: readonly PageDownload[];
  readonly from_cache: 'not_modified' | 'max_age' | null;
  readonly sort_at: string;
}

export interface PageDownload {
  readonly url: string;
  readonly sha256: string;
  readonly content_type: string | null;
  readonly bytes: number;
}

export interface PageQuery {
  readonly jobId: string;
  readonly ok?: boolean;
  /** Only pages marked duplicates (near-duplicates and rel=canonical duplicates: {@link DUPLICATE_FETCH_IDS}), or only the others. */
  readonly duplicate?: boolean;
  readonly limit: number;
  readonly after?: { readonly at: string; readonly id: string };
}

/**
 * The fetch ids of a job's ($1) pages marked duplicates: PageFetched lines of its log that carry
 * `near_duplicate_of` (the worker's near-duplicate marking) or `canonical_url` (a rel=canonical
 * duplicate). The log holds them (one line per fetch), so the pages read model needed no new
 * column; the subquery is one pass over the job's log, hashed, whatever the page count.
 */
const DUPLICATE_FETCH_IDS = `SELECT data->>'fetch_id' FROM job_log WHERE job_id = $1 AND event = 'PageFetched' AND (data ? 'near_duplicate_of' OR data ? 'canonical_url')`;

/**
 * Pages of the job marked near-duplicates (PageFetched.near_duplicate_of: the worker found their
 * main text within TRAWL_NEAR_DUPLICATE_DISTANCE bits of an earlier page of the job on the same
 * host). Counted from the job's log, whose PageFetched lines carry the mark, for the one job's view.
 */
export async function nearDuplicatePageCount(db: Db, jobId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_log WHERE job_id = $1 AND event = 'PageFetched' AND data ? 'near_duplicate_of'`, [jobId]);
  return rows[0]?.n ?? 0;
}

/** A job's pages in fetch order, keyset-paginated on (fetched_at, fetch_id). */
export async function listPages(db: Db, q: PageQuery): Promise<PageRow[]> {
  const where = ['job_id = $1'];
  const args: unknown[] = [q.jobId];
  const arg = (v: unknown) => `$${args.push(v)}`;
  if (q.ok !== undefined) where.push(`ok = ${arg(q.ok)}`);
  if (q.duplicate !== undefined) where.push(`${q.duplicate ? '' : 'NOT '}fetch_id::text IN (${DUPLICATE_FETCH_IDS})`);
  if (q.after) where.push(`(fetched_at, fetch_id::text) > (${arg(q.after.at)}::timestamptz, ${arg(q.after.id)})`);
  const { rows } = await db.query<PageRow>(
    `SELECT fetch_id::text AS fetch_id, url, final_url, status, content_type, bytes, fetch_ms, depth, render_mode, links_count,
       item_count, ok, error_code, error_message, attempts, fetched_at, content_hash, formats, downloads, from_cache, ${sortAt('fetched_at')} AS sort_at
     FROM job_pages WHERE ${where.join(' AND ')} ORDER BY fetched_at, fetch_id::text LIMIT ${arg(q.limit)}`,
    args,
  );
  return rows;
}

/** The URLs of a job's failed pages (at most `limit`), in fetch order: what a retry fetches again. */
export async function failedUrls(db: Db, jobId: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ url: string }>(
    'SELECT url FROM job_pages WHERE job_id = $1 AND NOT ok ORDER BY fetched_at, fetch_id::text LIMIT $2',
    [jobId, limit],
  );
  return rows.map((r) => r.url);
}

/** One of a page's downloads by its hash; `undefined` when there is no such page, `null` when the page lists no such file. */
export async function pageDownload(db: Db, jobId: string, fetchId: string, sha256: string): Promise<PageDownload | null | undefined> {
  const { rows } = await db.query<{ file: PageDownload | null }>(
    `SELECT (SELECT d FROM jsonb_array_elements(downloads) d WHERE d->>'sha256' = $3 LIMIT 1) AS file
     FROM job_pages WHERE job_id = $1 AND fetch_id::text = $2`,
    [jobId, fetchId, sha256],
  );
  return rows.length === 0 ? undefined : rows[0]!.file;
}

/** The hash of one page's stored format; `undefined` when there is no such page, `null` when the format is not stored. */
export async function pageFormatHash(db: Db, jobId: string, fetchId: string, format: string): Promise<string | null | undefined> {
  const { rows } = await db.query<{ hash: string | null }>(
    `SELECT (SELECT f->>'hash' FROM jsonb_array_elements(formats) f WHERE f->>'format' = $3 LIMIT 1) AS hash
     FROM job_pages WHERE job_id = $1 AND fetch_id::text = $2`,
    [jobId, fetchId, format],
  );
  return rows.length === 0 ? undefined : rows[0]!.hash;
}
