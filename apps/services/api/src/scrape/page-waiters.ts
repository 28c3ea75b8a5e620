/**
 * Waiters for a job's first page outcome, fed by the API's live subscription (plugins/live-feed.ts),
 * so `POST /scrape` and `POST /map` answer the moment the worker's PageFetched or PageFailed is on
 * `trawl.pages`, without polling Postgres.
 *
 * A waiter is registered *before* its job is submitted: the live subscription reads from the end of
 * the log, so an event produced before registration would never reach it. What the subscription
 * still cannot see (not connected yet, a rebalance) is covered by the caller's fallback on the
 * read model. A job that ends without a page (JobCompleted with nothing fetched or failed,
 * JobFailed, JobCancelled) resolves its waiter too, so a caller never waits for its full timeout in vain.
 *
 * Memory is bounded by the callers: each waiter is removed when it resolves or times out.
 */
import type { PageFailed, PageFetched } from '@trawl/schemas';
import type { FeedEvent } from '../feed/feed-event.ts';

export type PageOutcome =
  | { readonly kind: 'fetched'; readonly page: PageFetched }
  | { readonly kind: 'failed'; readonly page: PageFailed }
  /** The job ended (completed, failed or cancelled) with no page event seen. */
  | { readonly kind: 'ended'; readonly event: 'JobCompleted' | 'JobFailed' | 'JobCancelled'; readonly reason: string | null };

const ENDS = new Set(['JobCompleted', 'JobFailed', 'JobCancelled']);

export class PageWaiters {
  private readonly waiting = new Map<string, Set<(outcome: PageOutcome) => void>>();

  get size(): number {
    return this.waiting.size;
  }

  /**
   * A promise of the job's first outcome, and its cancellation (call it when giving up: it frees
   * the waiter). Register before the job's events can be produced.
   */
  wait(jobId: string): { readonly outcome: Promise<PageOutcome>; cancel(): void } {
    let listener!: (outcome: PageOutcome) => void;
    const outcome = new Promise<PageOutcome>((resolve) => (listener = resolve));
    let set = this.waiting.get(jobId);
    if (!set) this.waiting.set(jobId, (set = new Set()));
    set.add(listener);
    const cancel = () => {
      const current = this.waiting.get(jobId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.waiting.delete(jobId);
    };
    return { outcome, cancel };
  }

  /** One event of the live subscription; cheap when nobody waits (one map lookup). */
  handle(event: Pick<FeedEvent, 'name' | 'value'>): void {
    if (this.waiting.size === 0) return;
    const jobId = (event.value as { job_id?: unknown }).job_id;
    if (typeof jobId !== 'string') return;
    const set = this.waiting.get(jobId);
    if (!set) return;
    let outcome: PageOutcome;
    if (event.name === 'PageFetched') outcome = { kind: 'fetched', page: event.value as PageFetched };
    else if (event.name === 'PageFailed') outcome = { kind: 'failed', page: event.value as PageFailed };
    else if (ENDS.has(event.name)) {
      const v = event.value as { reason?: string | null; outcome?: string | null; pages_fetched?: number; pages_failed?: number };
      // `trawl.jobs` and `trawl.pages` are read side by side with no order between them: a job that
      // counted its page ends before that page's event may arrive here. Wait for the page.
      if ((v.pages_fetched ?? 0) + (v.pages_failed ?? 0) > 0) return;
      outcome = { kind: 'ended', event: event.name as 'JobCompleted' | 'JobFailed' | 'JobCancelled', reason: v.reason ?? v.outcome ?? null };
    } else return;
    this.waiting.delete(jobId);
    for (const listener of set) listener(outcome);
  }
}
