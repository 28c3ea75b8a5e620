import type { ItemExtracted, PageFailed, PageFetched, RenderMode } from '@trawl/schemas';
import type { FetchWithSpec } from '../spec/spec-reference.ts';
import { CrawlError, errorCode } from '../errors.ts';
import { jobEventId } from '../frontier/event-ids.ts';
import { boundItem, boundLinks } from './event-bounds.ts';
import { needsBrowser } from '../fetch/browser-work.ts';
import type { ProcessedPage } from './page-processor.ts';

/**
 * The worker's events, with deterministic ids (job + kind + fetch id / item key): a worker killed
 * after producing and before committing re-produces the same ids, and every consumer dedupes by them.
 * `occurred_at` is the wall clock of the run that produced it.
 */

export interface PageEventOptions {
  /** The producer's event limit: links and item fields are bounded to fit it (event-bounds.ts). Default: unbounded. */
  readonly maxEventBytes?: number;
  readonly now?: Date;
  /** What the content store keeps of the page: its body (for the HTTP cache, or the formats asked) and the formats (PageFetched.content_hash, .formats). */
  readonly content?: StoredContent;
}

/**
 * The hashes of a page's stored body and formats (the content store's PageContent, structurally).
 * `refused` names why nothing was stored although the job would have kept it (PageFetched.content_refused,
 * e.g. STORAGE_QUOTA_EXCEEDED); `contentHash` is then null, or the cached body a reused page names.
 */
export interface StoredContent {
  readonly contentHash: string | null;
  readonly formats: readonly { readonly format: string; readonly hash: string; readonly bytes: number }[];
  readonly refused?: string;
}

/** What a fetched page produces, in the order it is produced: its items, then the PageFetched that counts them. */
export interface PageEvents {
  readonly items: readonly ItemExtracted[];
  readonly fetched: PageFetched;
}

export function pageEvents(request: FetchWithSpec, page: ProcessedPage, attempt: number, options: PageEventOptions = {}): PageEvents {
  const now = options.now ?? new Date();
  const max = options.maxEventBytes ?? Infinity;
  return {
    items: itemExtractedEvents(request, page, now).map((item) => boundItem(item, max)),
    fetched: boundLinks(pageFetchedEvent(request, page, attempt, now, options.content), max),
  };
}

function pageFetchedEvent(request: FetchWithSpec, page: ProcessedPage, attempt: number, now: Date, content: StoredContent | undefined): PageFetched {
  const r = page.result;
  return {
    event_id: jobEventId({ jobId: request.job_id, kind: 'PageFetched', key: request.fetch_id }),
    occurred_at: now,
    causation_id: request.event_id,
    job_id: request.job_id,
    fetch_id: request.fetch_id,
    url: request.url,
    final_url: r.finalUrl,
    status: r.status,
    content_type: r.contentType,
    bytes: r.bytes,
    fetch_ms: r.fetchMs,
    render_mode: r.renderMode,
    depth: request.depth,
    links: [...page.links],
    next_page: page.nextPage,
    item_count: page.items.length,
    links_dropped: 0,
    truncated: r.truncated,
    parsed: page.parsed,
    attempt,
    content_hash: content?.contentHash ?? page.cache?.contentHash ?? null,
    formats: content ? content.formats.map(({ format, hash, bytes }) => ({ format, hash, bytes })) : [],
    etag: r.validators?.etag ?? null,
    last_modified: r.validators?.lastModified ?? null,
    from_cache: page.cache?.reuse ?? null,
    sitemap_urls: [...(page.sitemaps?.urls ?? [])],
    sitemap_urls_dropped: page.sitemaps?.dropped ?? 0,
    content_refused: content?.refused ?? null,
    canonical_url: page.canonical ?? null,
    simhash: page.simhash ?? null,
    near_duplicate_of: page.nearDuplicateOf ?? null,
    notes: [],
    downloads: (page.storedDownloads ?? []).map(({ url, sha256, content_type, bytes }) => ({ url, sha256, content_type, bytes })),
    throttle: null,
  };
}

function itemExtractedEvents(request: FetchWithSpec, page: ProcessedPage, now: Date): ItemExtracted[] {
  return page.items.map((item) => ({
    event_id: jobEventId({ jobId: request.job_id, kind: 'ItemExtracted', key: item.key }),
    occurred_at: now,
    causation_id: jobEventId({ jobId: request.job_id, kind: 'PageFetched', key: request.fetch_id }),
    job_id: request.job_id,
    fetch_id: request.fetch_id,
    item_key: item.key,
    url: request.url,
    fields: item.fields,
    truncated_fields: [],
    errors: [...item.errors],
  }));
}

/** PageFailed for an error that will not be retried (any more). */
export function pageFailedEvent(request: FetchWithSpec, err: unknown, attempts: number, now: Date = new Date()): PageFailed {
  const status = err instanceof CrawlError && 'status' in err && typeof err.status === 'number' ? err.status : null;
  const renderMode: RenderMode = needsBrowser(request.spec) ? 'browser' : 'http';
  return {
    event_id: jobEventId({ jobId: request.job_id, kind: 'PageFailed', key: request.fetch_id }),
    occurred_at: now,
    causation_id: request.event_id,
    job_id: request.job_id,
    fetch_id: request.fetch_id,
    url: request.url,
    depth: request.depth,
    status,
    error_code: codeOf(err),
    error_message: err instanceof Error ? err.message.slice(0, 1000) : String(err).slice(0, 1000),
    attempts,
    render_mode: renderMode,
  };
}

/** The crawl's code, else the code of another package's coded error (the producer's TRAWL_EVENT_TOO_LARGE), else TRAWL_UNEXPECTED. */
function codeOf(err: unknown): string {
  if (err instanceof CrawlError) return errorCode(err);
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^TRAWL_[A-Z_]+$/.test(code) ? code : errorCode(err);
}
