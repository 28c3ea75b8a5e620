/**
 * One row per fetch (job id + fetch id). A fetch normally ends in exactly one PageFetched or
 * PageFailed, but a worker that crashes after producing may fetch again; the row then keeps one
 * winner by a fixed precedence (a success beats a failure, then the later event), so counters
 * count each fetch once and live and replay agree whatever order they read the events in.
 */
import type { CacheReuse, PageFailed, PageFetched, RenderMode } from '@trawl/schemas';
import { laterThan } from './job-row.ts';

export interface PageRow {
  job_id: string;
  fetch_id: string;
  url: string;
  final_url: string | null;
  status: number | null;
  content_type: string | null;
  bytes: number;
  fetch_ms: number | null;
  depth: number;
  render_mode: RenderMode;
  links_count: number;
  item_count: number;
  ok: boolean;
  truncated: boolean;
  error_code: string | null;
  error_message: string | null;
  attempts: number;
  fetched_at: Date;
  event_id: string;
  /** The body's hash in the content store; null when the job keeps no content. */
  content_hash: string | null;
  /** The stored formats and their hashes, `[{format, hash, bytes}]`. */
  formats: { format: string; hash: string; bytes: number }[];
  /** The linked files kept for the page (CrawlSpec.downloads), `[{url, sha256, content_type, bytes}]`. */
  downloads: { url: string; sha256: string; content_type: string | null; bytes: number }[];
  /** The response's validators (after a 304: the ones that hold now), for the HTTP cache. */
  etag: string | null;
  last_modified: string | null;
  /** Set when the page was parsed from its stored body: `not_modified` (a 304) or `max_age` (no request). */
  from_cache: CacheReuse | null;
}

export function pageKey(job_id: string, fetch_id: string): string {
  return `${job_id}\u0000${fetch_id}`;
}

export function pageFromFetched(e: PageFetched): PageRow {
  return {
    job_id: e.job_id,
    fetch_id: e.fetch_id,
    url: e.url,
    final_url: e.final_url,
    status: e.status,
    content_type: e.content_type,
    bytes: e.bytes,
    fetch_ms: e.fetch_ms,
    depth: e.depth,
    render_mode: e.render_mode,
    links_count: e.links.length,
    item_count: e.item_count,
    ok: true,
    truncated: e.truncated,
    error_code: null,
    error_message: null,
    attempts: e.attempt,
    fetched_at: e.occurred_at,
    event_id: e.event_id,
    content_hash: e.content_hash ?? null,
    formats: (e.formats ?? []).map(({ format, hash, bytes }) => ({ format, hash, bytes: Number(bytes) })),
    downloads: (e.downloads ?? []).map(({ url, sha256, content_type, bytes }) => ({ url, sha256, content_type: content_type ?? null, bytes: Number(bytes) })),
    etag: e.etag ?? null,
    last_modified: e.last_modified ?? null,
    from_cache: e.from_cache ?? null,
  };
}

export function pageFromFailed(e: PageFailed): PageRow {
  return {
    job_id: e.job_id,
    fetch_id: e.fetch_id,
    url: e.url,
    final_url: null,
    status: e.status,
    content_type: null,
    bytes: 0,
    fetch_ms: null,
    depth: e.depth,
    render_mode: e.render_mode,
    links_count: 0,
    item_count: 0,
    ok: false,
    truncated: false,
    error_code: e.error_code,
    error_message: e.error_message,
    attempts: e.attempts,
    fetched_at: e.occurred_at,
    event_id: e.event_id,
    content_hash: null,
    formats: [],
    downloads: [],
    etag: null,
    last_modified: null,
    from_cache: null,
  };
}

/** Which of two rows of one fetch stands: commutative, so arrival order does not matter. */
export function pickPage(a: PageRow | undefined, b: PageRow): PageRow {
  if (!a) return b;
  if (a.ok !== b.ok) return a.ok ? a : b;
  return laterThan(b.fetched_at, b.event_id, a.fetched_at, a.event_id) ? b : a;
}
