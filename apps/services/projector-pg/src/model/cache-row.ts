/**
 * The HTTP cache read model (`http_cache`): per user and normalised URL, the latest page of that
 * user's jobs that the cache can serve — its stored body (content hash), validators (ETag,
 * Last-Modified), final URL, status, type, and when it was fetched or last revalidated. The
 * frontier looks entries up as it issues fetch requests (apps/services/frontier,
 * http-cache-reader.ts); one user's entries never serve another user's crawl, as the user is half
 * the key.
 *
 * A row is a function of the page rows (`job_pages`) and the jobs' users, so every path builds the
 * same table and replay verifies it with the rest:
 *
 * - **Cacheable** pages (isCacheable, and CACHEABLE_SQL, its SQL twin for the replay's settle): a
 *   successful fetch over HTTP, 2xx, whole, with a stored body, of a job whose user is known — and
 *   not a reuse within max_age, which asked the site nothing and so must not make the entry look
 *   younger. A 304 revalidation counts: it proves the stored body current at its time, and carries
 *   the validators that hold now.
 * - **Latest wins**: of a key's cacheable pages, the greatest (fetched_at, event_id). Commutative and
 *   idempotent, so arrival order and copies do not matter; a page's successful row never changes
 *   once written (its event id is derived from the fetch, and the first copy stands), so the set of
 *   cacheable rows only grows and the maximum only moves forward: the live path can upsert "if
 *   later" without reading the table (writePlan), the replay's settle takes a DISTINCT ON.
 * - **Users known late**: a page projected before its job's CrawlRequested/JobDispatched has no
 *   user yet; when the user arrives, the job's stored cacheable pages are read back and become
 *   entries then (loadState's `unownedPages`). A job's user never changes once known.
 */
import type { CacheReuse } from '@trawl/schemas';
import type { PageRow } from './page-row.ts';
import { laterThan } from './job-row.ts';

export interface CacheRow {
  user_id: string;
  url: string;
  final_url: string;
  status: number;
  content_type: string | null;
  etag: string | null;
  last_modified: string | null;
  content_hash: string;
  fetched_at: Date;
  job_id: string;
  fetch_id: string;
  event_id: string;
}

export function cacheKey(user_id: string, url: string): string {
  return `${user_id}\u0000${url}`;
}

const REUSED_WITHOUT_REQUEST: CacheReuse = 'max_age';

/** Whether a page row can serve later crawls from the cache (see above). */
export function isCacheable(p: PageRow): boolean {
  return (
    p.ok &&
    p.render_mode === 'http' &&
    p.status !== null && p.status >= 200 && p.status < 300 &&
    !p.truncated &&
    p.content_hash !== null &&
    p.final_url !== null &&
    p.from_cache !== REUSED_WITHOUT_REQUEST
  );
}

/** isCacheable over a job_pages row aliased `p`, for the replay's set-wise settle. */
export const CACHEABLE_SQL = `p.ok AND p.render_mode = 'http' AND p.status BETWEEN 200 AND 299 AND NOT p.truncated
  AND p.content_hash IS NOT NULL AND p.final_url IS NOT NULL AND p.from_cache IS DISTINCT FROM '${REUSED_WITHOUT_REQUEST}'`;

export function cacheRowOf(p: PageRow, user_id: string): CacheRow {
  return {
    user_id,
    url: p.url,
    final_url: p.final_url!,
    status: p.status!,
    content_type: p.content_type,
    etag: p.etag,
    last_modified: p.last_modified,
    content_hash: p.content_hash!,
    fetched_at: p.fetched_at,
    job_id: p.job_id,
    fetch_id: p.fetch_id,
    event_id: p.event_id,
  };
}

/** The row that stands of two for one key: the later (fetched_at, event_id). */
export function pickCacheRow(a: CacheRow | undefined, b: CacheRow): CacheRow {
  if (!a) return b;
  return laterThan(b.fetched_at, b.event_id, a.fetched_at, a.event_id) ? b : a;
}

/**
 * "b is later than the stored row" as the upsert's guard over `EXCLUDED` and the table: the SQL twin
 * of pickCacheRow (ids compared bytewise, as JavaScript compares strings).
 */
export function laterCacheRowSql(table: string): string {
  return `EXCLUDED.fetched_at > ${table}.fetched_at OR (EXCLUDED.fetched_at = ${table}.fetched_at AND EXCLUDED.event_id COLLATE "C" > ${table}.event_id COLLATE "C")`;
}
