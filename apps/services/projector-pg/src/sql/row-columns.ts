/** The columns of each read-model table as the projector writes them, and stored rows read back. */
import type { JobRow, JobStatus } from '../model/job-row.ts';
import type { PageRow } from '../model/page-row.ts';
import type { ItemRow } from '../model/item-row.ts';
import type { LogRow } from '../model/plan-batch.ts';
import type { CacheRow } from '../model/cache-row.ts';
import type { Column } from './bulk-upsert.ts';

const col = <R>(name: keyof R & string, type: Column<R>['type']): Column<R> => ({ name, type, get: (r) => r[name] });

export const JOB_COLUMNS: readonly Column<JobRow>[] = [
  col('job_id', 'text'), col('user_id', 'text'), col('schedule_id', 'text'), col('target_id', 'text'), col('website_id', 'text'),
  col('status', 'text'), col('spider', 'text'), col('start_urls', 'jsonb'), col('search_url', 'text'), col('params', 'jsonb'),
  col('spec', 'jsonb'), col('max_depth', 'int'), col('max_pages', 'int'), col('dedupe_key', 'text'), col('attempt', 'int'),
  col('requested_at', 'timestamptz'), col('dispatched_at', 'timestamptz'), col('first_page_at', 'timestamptz'),
  col('finished_at', 'timestamptz'), col('completed_at', 'timestamptz'), col('outcome', 'text'), col('failed_at', 'timestamptz'),
  col('cancelled_at', 'timestamptz'), col('cancel_reason', 'text'),
  col('paused_at', 'timestamptz'), col('resumed_at', 'timestamptz'), col('retry_of', 'text'), col('pages_fetched', 'int'), col('pages_failed', 'int'),
  col('items_extracted', 'int'), col('bytes', 'bigint'), col('urls_seen', 'int'), col('completed_urls_seen', 'int'),
  col('pages_blocked', 'int'), col('duplicates', 'int'), col('sessions_replaced', 'int'), col('items_invalid', 'int'),
  col('error_code', 'text'), col('error', 'text'), col('error_event_id', 'text'), col('log_seq', 'int'), col('updated_at', 'timestamptz'),
];

export const PAGE_COLUMNS: readonly Column<PageRow>[] = [
  col('job_id', 'text'), col('fetch_id', 'text'), col('url', 'text'), col('final_url', 'text'), col('status', 'int'),
  col('content_type', 'text'), col('bytes', 'bigint'), col('fetch_ms', 'int'), col('depth', 'int'), col('render_mode', 'text'),
  col('links_count', 'int'), col('item_count', 'int'), col('ok', 'bool'), col('truncated', 'bool'), col('error_code', 'text'),
  col('error_message', 'text'), col('attempts', 'int'), col('fetched_at', 'timestamptz'), col('event_id', 'text'),
  col('content_hash', 'text'), col('formats', 'jsonb'), col('etag', 'text'), col('last_modified', 'text'), col('from_cache', 'text'),
  col('downloads', 'jsonb'),
];

export const CACHE_COLUMNS: readonly Column<CacheRow>[] = [
  col('user_id', 'text'), col('url', 'text'), col('final_url', 'text'), col('status', 'int'), col('content_type', 'text'),
  col('etag', 'text'), col('last_modified', 'text'), col('content_hash', 'text'), col('fetched_at', 'timestamptz'),
  col('job_id', 'text'), col('fetch_id', 'text'), col('event_id', 'text'),
];

export const ITEM_COLUMNS: readonly Column<ItemRow>[] = [
  col('job_id', 'text'), col('item_key', 'text'), col('fetch_id', 'text'), col('url', 'text'), col('fields', 'jsonb'),
  col('extracted_at', 'timestamptz'), col('event_id', 'text'), col('errors', 'jsonb'),
];

export const LOG_COLUMNS: readonly Column<LogRow>[] = [
  col('job_id', 'text'), col('seq', 'int'), col('ts', 'timestamptz'), col('level', 'text'), col('msg', 'text'),
  col('event', 'text'), col('event_id', 'text'), col('data', 'jsonb'),
];

type DbRow = Record<string, unknown>;

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
const num = (v: unknown): number => Number(v ?? 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function jobFromDb(r: DbRow): JobRow {
  return {
    job_id: String(r.job_id),
    user_id: str(r.user_id),
    schedule_id: str(r.schedule_id),
    target_id: str(r.target_id),
    website_id: str(r.website_id),
    status: r.status as JobStatus,
    spider: str(r.spider),
    start_urls: (r.start_urls as string[] | null) ?? [],
    search_url: str(r.search_url),
    params: (r.params as Record<string, string> | null) ?? {},
    spec: (r.spec as JobRow['spec']) ?? null,
    max_depth: numOrNull(r.max_depth),
    max_pages: numOrNull(r.max_pages),
    dedupe_key: str(r.dedupe_key),
    attempt: num(r.attempt),
    requested_at: date(r.requested_at),
    dispatched_at: date(r.dispatched_at),
    first_page_at: date(r.first_page_at),
    finished_at: date(r.finished_at),
    completed_at: date(r.completed_at),
    outcome: (r.outcome as JobRow['outcome']) ?? null,
    failed_at: date(r.failed_at),
    cancelled_at: date(r.cancelled_at),
    cancel_reason: str(r.cancel_reason),
    paused_at: date(r.paused_at),
    resumed_at: date(r.resumed_at),
    retry_of: str(r.retry_of),
    pages_fetched: num(r.pages_fetched),
    pages_failed: num(r.pages_failed),
    items_extracted: num(r.items_extracted),
    bytes: num(r.bytes),
    urls_seen: num(r.urls_seen),
    completed_urls_seen: numOrNull(r.completed_urls_seen),
    pages_blocked: num(r.pages_blocked),
    duplicates: num(r.duplicates),
    sessions_replaced: num(r.sessions_replaced),
    items_invalid: num(r.items_invalid),
    error_code: str(r.error_code),
    error: str(r.error),
    error_event_id: str(r.error_event_id),
    log_seq: num(r.log_seq),
    updated_at: date(r.updated_at) ?? new Date(0),
  };
}

export function pageFromDb(r: DbRow): PageRow {
  return {
    job_id: String(r.job_id),
    fetch_id: String(r.fetch_id),
    url: String(r.url),
    final_url: str(r.final_url),
    status: numOrNull(r.status),
    content_type: str(r.content_type),
    bytes: num(r.bytes),
    fetch_ms: numOrNull(r.fetch_ms),
    depth: num(r.depth),
    render_mode: r.render_mode as PageRow['render_mode'],
    links_count: num(r.links_count),
    item_count: num(r.item_count),
    ok: Boolean(r.ok),
    truncated: Boolean(r.truncated),
    error_code: str(r.error_code),
    error_message: str(r.error_message),
    attempts: num(r.attempts),
    fetched_at: date(r.fetched_at)!,
    event_id: String(r.event_id),
    content_hash: str(r.content_hash),
    formats: (r.formats ?? []) as PageRow['formats'],
    downloads: (r.downloads ?? []) as PageRow['downloads'],
    etag: str(r.etag),
    last_modified: str(r.last_modified),
    from_cache: (str(r.from_cache) as PageRow['from_cache']) ?? null,
  };
}
