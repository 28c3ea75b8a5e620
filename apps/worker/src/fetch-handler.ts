/**
 * The Kafka side of a worker: each FetchRequested goes through the crawl's PageProcessor (robots,
 * politeness, fetch, parse), then its events are produced — items before their PageFetched, so by
 * the time the frontier counts the page done, and may complete the job, everything the page
 * yielded is durable in Kafka.
 *
 * A page is recorded whole or not at all, as far as size goes: its events are built bounded to the
 * producer's event limit (pageEvents), then every one of them is encoded and measured before the
 * first is sent. Should one still be over the limit, the page fails as a whole (a non-retriable
 * TRAWL_EVENT_TOO_LARGE, then PageFailed) with none of its items written, instead of some items in
 * Kafka, the page failed, and the read models' items disagreeing with the job's counters.
 *
 * Failures are thrown with their `retriable` flag: the streams consumer forwards retriable ones
 * through the retry tiers and sends the rest (and the last attempt) to trawl.fetch.dlq; the
 * dead-letter hook then produces PageFailed so the job can still complete. A page past its budget
 * (page-budget.ts) fails with BudgetExceededError: retried, and poison after TRAWL_MAX_DELIVERIES
 * deliveries without an outcome — its PageFailed then carries the streams error's code
 * (TRAWL_POISON, TRAWL_BUDGET_EXCEEDED).
 */
import { StreamsError, type ConsumedEventOf, type DeadLetter, type EncodedEvent, type EventBody, type EventProducer } from '@trawl/streams';
import { pageEvents, pageFailedEvent, type PageProcessor } from '@trawl/crawl';
import type { EventMap, EventName, FetchRequested } from '@trawl/schemas';
import type { Logger } from 'pino';
import { pageBudget } from './page-budget.ts';

export interface FetchHandlerDeps {
  /** The crawl's PageProcessor (parsing in-line or on threads). */
  readonly processor: Pick<PageProcessor, 'process'>;
  readonly producer: EventProducer;
  readonly logger: Logger;
  /** Jobs known to be over (cancelled, completed): their remaining fetches are skipped. */
  readonly endedJobs: ReadonlySet<string>;
  /** The wall clock a page's fetch and parse may take (TRAWL_PAGE_BUDGET_MS). */
  readonly pageBudgetMs: number;
}

export class FetchHandler {
  constructor(private readonly deps: FetchHandlerDeps) {}

  async handle(event: ConsumedEventOf<'FetchRequested'>): Promise<void> {
    const request = event.value;
    if (this.deps.endedJobs.has(request.job_id)) return;
    const budget = pageBudget(this.deps.pageBudgetMs, event.signal, request.url);
    const page = await budget.run(this.deps.processor.process(request, { signal: budget.signal }));
    // PageFetched has no field for it: what the parse limits left out is said here, once per page.
    if (page.cut) this.deps.logger.warn({ job_id: request.job_id, url: request.url, cut: page.cut }, 'page cut by the parse limits');
    const { items, fetched } = pageEvents(request, page, event.attempt, { maxEventBytes: this.deps.producer.maxEventBytes });
    const encodedItems = await Promise.all(items.map((item) => this.encode('ItemExtracted', item)));
    const encodedPage = await this.encode('PageFetched', fetched);
    await Promise.all(encodedItems.map((item) => this.deps.producer.sendRaw(item)));
    await this.deps.producer.sendRaw(encodedPage);
  }

  /** The dead-letter hook: a fetch given up for good still ends, as PageFailed. */
  async onDeadLetter(dead: DeadLetter): Promise<void> {
    if (dead.event?.name !== 'FetchRequested') {
      this.deps.logger.error({ reason: dead.reason, origin: dead.origin, error: dead.errorMessage }, 'undecodable fetch request dead-lettered');
      return;
    }
    const request = dead.event.value as FetchRequested;
    const failed = pageFailedEvent(request, dead.error, dead.attempts);
    // Given up by the consumer itself (poison, a budget overrun exhausted): its code says so.
    await this.emit('PageFailed', dead.error instanceof StreamsError ? { ...failed, error_code: dead.error.code } : failed);
  }

  private emit<N extends EventName>(name: N, event: EventMap[N]): Promise<string> {
    return this.deps.producer.emit(name, ...this.split(event));
  }

  /** Encoded and measured, not sent: throws EventTooLargeError over the producer's limit. */
  private encode<N extends EventName>(name: N, event: EventMap[N]): Promise<EncodedEvent> {
    return this.deps.producer.encode(name, ...this.split(event));
  }

  private split<N extends EventName>(event: EventMap[N]): [EventBody<N>, { eventId: string; occurredAt: Date; causationId: string | null }] {
    const { event_id, occurred_at, causation_id, ...body } = event as EventMap[N] & { event_id: string; occurred_at: Date; causation_id: string | null };
    return [body as unknown as EventBody<N>, { eventId: event_id, occurredAt: occurred_at, causationId: causation_id }];
  }
}
