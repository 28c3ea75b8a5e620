/**
 * Which Trawl events are webhook events, and what their `data` holds: a pure mapping.
 *
 * - `job.started` is JobDispatched: the moment the crawl is handed to the frontier (for a
 *   scheduled or `schedule_at` job, when its slot comes, not when it was requested). It precedes
 *   every other event of the job on trawl.jobs.
 * - `job.completed` / `job.cancelled` are JobCompleted with outcome `finished` / `cancelled`:
 *   the frontier's one end of the job (exactly once, never early), not the cancel request.
 * - `job.failed` is JobFailed.
 * - `items.extracted` gathers ItemExtracted (item-batcher.ts).
 * - `page.changed` is PageChanged, which this service produces itself (change-detector.ts): a page
 *   of a schedule's run whose content hash differs from the schedule's previous finished run's.
 */
import type { EventMap } from '@trawl/schemas';
import type { WebhookEventType } from '@trawl/store';

export interface JobWebhookEvent {
  readonly type: WebhookEventType;
  readonly eventId: string;
  readonly jobId: string;
  readonly occurredAt: Date;
  readonly data: Record<string, unknown>;
}

type JobEvent =
  | { readonly name: 'JobDispatched'; readonly value: EventMap['JobDispatched'] }
  | { readonly name: 'JobCompleted'; readonly value: EventMap['JobCompleted'] }
  | { readonly name: 'JobFailed'; readonly value: EventMap['JobFailed'] };

export function isJobEvent(e: { readonly name: string }): e is JobEvent {
  return e.name === 'JobDispatched' || e.name === 'JobCompleted' || e.name === 'JobFailed';
}

const iso = (d: Date | number): string => new Date(d).toISOString();

export function jobWebhookEvent(e: JobEvent): JobWebhookEvent {
  const base = { eventId: e.value.event_id, jobId: e.value.job_id, occurredAt: new Date(e.value.occurred_at) };
  switch (e.name) {
    case 'JobDispatched': {
      const v = e.value;
      return { ...base, type: 'job.started', data: { schedule_id: v.schedule_id, target_id: v.target_id, start_urls: v.start_urls, attempt: v.attempt } };
    }
    case 'JobCompleted': {
      const v = e.value;
      return {
        ...base,
        type: v.outcome === 'cancelled' ? 'job.cancelled' : 'job.completed',
        data: { outcome: v.outcome, pages_fetched: v.pages_fetched, pages_failed: v.pages_failed, items_extracted: v.items_extracted, urls_seen: v.urls_seen, started_at: iso(v.started_at), ended_at: iso(v.occurred_at) },
      };
    }
    case 'JobFailed': {
      const v = e.value;
      return { ...base, type: 'job.failed', data: { error_code: v.error_code, reason: v.reason, pages_fetched: v.pages_fetched, pages_failed: v.pages_failed, ended_at: iso(v.occurred_at) } };
    }
  }
}

export function pageChangedEvent(v: EventMap['PageChanged']): JobWebhookEvent {
  return {
    type: 'page.changed',
    eventId: v.event_id,
    jobId: v.job_id,
    occurredAt: new Date(v.occurred_at),
    data: {
      url: v.url,
      fetch_id: v.fetch_id,
      schedule_id: v.schedule_id,
      content_hash: v.content_hash,
      previous_job_id: v.previous_job_id,
      previous_fetch_id: v.previous_fetch_id,
      previous_content_hash: v.previous_content_hash,
      fetched_at: iso(v.occurred_at),
    },
  };
}

/** What a delivery's body is: `Idempotency-Key` is `id`. */
export interface DeliveryBody {
  readonly id: string;
  readonly type: string;
  readonly created_at: string;
  readonly job_id?: string;
  readonly data: Record<string, unknown>;
}

export function deliveryBody(id: string, type: string, createdAt: Date, jobId: string | undefined, data: Record<string, unknown>): DeliveryBody {
  return { id, type, created_at: createdAt.toISOString(), ...(jobId === undefined ? {} : { job_id: jobId }), data };
}

/** One item of an `items.extracted` delivery; `id` is its ItemExtracted event id (de-duplicate items by it). */
export function itemData(v: EventMap['ItemExtracted']): Record<string, unknown> {
  return { id: v.event_id, url: v.url, item_key: v.item_key, fields: v.fields, truncated_fields: v.truncated_fields, errors: v.errors, extracted_at: iso(v.occurred_at) };
}
