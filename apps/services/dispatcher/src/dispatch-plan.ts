/**
 * What one due slot turns into, pure. The job id is derived from the schedule and the slot, and
 * the event ids from the job id, so dispatching the same slot twice (a crash between producing
 * and committing, or two replicas racing) yields events with the very same ids, which everything
 * downstream absorbs (the frontier keeps a job's first JobDispatched). Their bodies are equal too
 * but for credentials named by `{secret}`, sealed afresh at each dispatch (sealing is randomised).
 */
import type { CrawlSpec, RequestOptions } from '@trawl/schemas';
import { eventId, type EventBody } from '@trawl/streams';
import { crawlSpec, jobIdForSlot, searchUrl, type Schedule, type Target, type Website } from '@trawl/store';

export interface DispatchPlan {
  readonly jobId: string;
  readonly targetDue: { readonly id: string; readonly body: EventBody<'TargetDue'> };
  readonly jobDispatched: { readonly id: string; readonly body: EventBody<'JobDispatched'> };
}

export interface PlanInput {
  readonly schedule: Schedule;
  readonly slot: Date;
  readonly target?: Target | null;
  readonly website?: Website | null;
  /** The most pages the owner's quota leaves this job (its spec's max_pages is cut to it). */
  readonly pageCap?: number;
  /**
   * The job's option layers with their credentials sealed — the website's, then the schedule's
   * stored request (store sealedLayers) — made before planning, which is pure. Absent: none.
   */
  readonly options?: readonly (RequestOptions | null)[];
}

export function planDispatch({ schedule, slot, target, website, pageCap, options = [] }: PlanInput): DispatchPlan {
  const jobId = jobIdForSlot(schedule.id, slot);
  // A recurring schedule's next run revalidates what this one fetched: its bodies are kept for the
  // HTTP cache unless the request says otherwise. A one-time run keeps none unless asked.
  const recurring = schedule.cron !== null || schedule.interval_ms !== null;
  let spec: CrawlSpec;
  let startUrls: readonly string[];
  if (target) {
    spec = crawlSpec(website, { store_in_cache: recurring, request: options });
    startUrls = [searchUrl(target)];
  } else if (schedule.request) {
    spec = crawlSpec(website, {
      depth: schedule.request.depth,
      max_pages: schedule.request.max_pages,
      formats: schedule.request.formats ?? [],
      max_age: schedule.request.max_age ?? null,
      ignore_cache: schedule.request.ignore_cache ?? false,
      store_in_cache: schedule.request.store_in_cache ?? recurring,
      sitemap: schedule.request.sitemap ?? 'include',
      // The schedule's stored request options over the website's, field by field.
      request: options,
    });
    startUrls = schedule.request.start_urls;
  } else {
    throw new Error(`schedule ${schedule.id} has neither a target nor a request`);
  }
  if (pageCap !== undefined && pageCap < spec.max_pages) spec = { ...spec, max_pages: pageCap };
  const targetDueId = eventId('TargetDue', jobId);
  return {
    jobId,
    targetDue: {
      id: targetDueId,
      body: {
        job_id: jobId,
        target_id: target?.id ?? null,
        schedule_id: schedule.id,
        website_id: website?.id ?? null,
        user_id: schedule.owner_id,
        slot_at: slot,
      },
    },
    jobDispatched: {
      id: eventId('JobDispatched', jobId),
      body: {
        job_id: jobId,
        user_id: schedule.owner_id,
        target_id: target?.id ?? null,
        schedule_id: schedule.id,
        search_url: startUrls[0] ?? '',
        start_urls: startUrls,
        keywords: target?.keywords ?? [],
        location: target?.location ?? null,
        spec,
        attempt: 1,
        params: schedule.request?.params ?? {},
      },
    },
  };
}
