import type { FetchRequested, ItemExtracted, PageFailed, PageFetched, RenderMode } from '@trawl/schemas';
import { CrawlError, errorCode } from '../errors.ts';
import { eventId } from '../frontier/event-ids.ts';
import type { ProcessedPage } from './page-processor.ts';

/**
 * The worker's events, with deterministic ids (job + kind + fetch id / item key): a worker killed
 * after producing and before committing re-produces the same ids, and every consumer dedupes by them.
 * `occurred_at` is the wall clock of the run that produced it.
 */
export function pageFetchedEvent(request: FetchRequested, page: ProcessedPage, attempt: number, now: Date = new Date()): PageFetched {
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
    truncated: r.truncated,
    parsed: page.parsed,
    attempt,
  };
}

export function itemExtractedEvents(request: FetchRequested, page: ProcessedPage, now: Date = new Date()): ItemExtracted[] {
  return page.items.map((item) => ({
    event_id: eventId(request.job_id, 'ItemExtracted', item.key),
    occurred_at: now,
    causation_id: eventId(request.job_id, 'PageFetched', request.fetch_id),
    job_id: request.job_id,
    fetch_id: request.fetch_id,
    item_key: item.key,
    url: request.url,
    fields: item.fields,
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
    error_code: errorCode(err),
    error_message: err instanceof Error ? err.message.slice(0, 1000) : String(err).slice(0, 1000),
    attempts,
    render_mode: renderMode,
  };
}
