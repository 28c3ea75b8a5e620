import type { FetchRequested, ItemExtracted, PageFailed, PageFetched, RenderMode } from '@trawl/schemas';
import { CrawlError, errorCode } from '../errors.ts';
import { eventId } from '../frontier/event-ids.ts';
import { boundItem, boundLinks } from './event-bounds.ts';
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
}

/** What a fetched page produces, in the order it is produced: its items, then the PageFetched that counts them. */
export interface PageEvents {
  readonly items: readonly ItemExtracted[];
  readonly fetched: PageFetched;
}

export function pageEvents(request: FetchRequested, page: ProcessedPage, attempt: number, options: PageEventOptions = {}): PageEvents {
  const now = options.now ?? new Date();
  const max = options.maxEventBytes ?? Infinity;
  return {
    items: itemExtractedEvents(request, page, now).map((item) => boundItem(item, max)),
    fetched: boundLinks(pageFetchedEvent(request, page, attempt, now), max),
  };
}

function pageFetchedEvent(request: FetchRequested, page: ProcessedPage, attempt: number, now: Date): PageFetched {
  const r = page.result;
  return {
    event_id: eventId(request.job_id, 'PageFetched', request.fetch_id),
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
  };
}

function itemExtractedEvents(request: FetchRequested, page: ProcessedPage, now: Date): ItemExtracted[] {
  return page.items.map((item) => ({
    event_id: eventId(request.job_id, 'ItemExtracted', item.key),
    occurred_at: now,
    causation_id: eventId(request.job_id, 'PageFetched', request.fetch_id),
    job_id: request.job_id,
    fetch_id: request.fetch_id,
    item_key: item.key,
    url: request.url,
    fields: item.fields,
    truncated_fields: [],
  }));
}

/** PageFailed for an error that will not be retried (any more). */
export function pageFailedEvent(request: FetchRequested, err: unknown, attempts: number, now: Date = new Date()): PageFailed {
  const status = err instanceof CrawlError && 'status' in err && typeof err.status === 'number' ? err.status : null;
  const renderMode: RenderMode = request.spec.requires_browser ? 'browser' : 'http';
  return {
    event_id: eventId(request.job_id, 'PageFailed', request.fetch_id),
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
