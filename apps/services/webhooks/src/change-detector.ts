/**
 * Turns a PageFetched of a schedule's run into a PageChanged when the page's content differs from
 * the schedule's previous finished run (the decision: @trawl/changes' PageChangeDetector, the same
 * rules as `GET /jobs/:id/changes`). The event goes to trawl.pages, keyed by its job, where the
 * live feed shows it and this service's own consumer delivers it as `page.changed`.
 *
 * Why here: deciding needs the previous run's page, which no worker knows at fetch time; this
 * service already follows every run and its owner, and the event in the log, not a side effect,
 * is what lets the feed, webhooks and any later reader agree.
 *
 * Replay-safe and idempotent: the decision is taken only once the baseline is settled in the read
 * models (a `wait` throws a retriable error: the PageFetched goes to the next retry tier and is
 * decided later), and the event is derived from what it decides — its id a UUIDv5 of job and fetch,
 * its time the PageFetched's — so a re-read or a retry emits the very same event, which every
 * reader absorbs by id.
 */
import type { EventMap } from '@trawl/schemas';
import { eventId, RetriableError, type EventProducer } from '@trawl/streams';
import type { PageChangeDetector } from '@trawl/changes';

export type PageChangeOutcome = 'changed' | 'none';

/** The id of a page's PageChanged: one per fetch, whoever decides it and however often. */
export function pageChangedId(jobId: string, fetchId: string): string {
  return eventId('PageChanged', jobId, fetchId);
}

export async function emitPageChange(
  detector: PageChangeDetector,
  producer: Pick<EventProducer, 'emit'>,
  fetched: EventMap['PageFetched'],
  topic: string,
): Promise<PageChangeOutcome> {
  if (fetched.content_hash === null) return 'none';
  const decision = await detector.decide(fetched);
  if (decision.kind === 'wait') throw new RetriableError(`PageFetched ${fetched.event_id}: change not decidable yet, ${decision.reason}`);
  if (decision.kind === 'none') return 'none';
  await producer.emit(
    'PageChanged',
    {
      job_id: fetched.job_id,
      fetch_id: fetched.fetch_id,
      url: fetched.url,
      schedule_id: decision.schedule_id,
      content_hash: fetched.content_hash,
      previous_job_id: decision.previous_job_id,
      previous_fetch_id: decision.previous_fetch_id,
      previous_content_hash: decision.previous_content_hash,
    },
    { eventId: pageChangedId(fetched.job_id, fetched.fetch_id), occurredAt: fetched.occurred_at, causationId: fetched.event_id, key: fetched.job_id, topic },
  );
  return 'changed';
}
