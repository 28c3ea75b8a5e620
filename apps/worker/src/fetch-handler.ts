/**
 * The Kafka side of a worker: each FetchRequested goes through the crawl's PageProcessor (robots,
 * politeness, fetch, parse), then its events are produced — items before their PageFetched, so by
 * the time the frontier counts the page done, and may complete the job, everything the page
 * yielded is durable in Kafka.
 *
 * Failures are thrown with their `retriable` flag: the streams consumer forwards retriable ones
 * through the retry tiers and sends the rest (and the last attempt) to trawl.fetch.dlq; the
 * dead-letter hook then produces PageFailed so the job can still complete.
 */
import type { ConsumedEventOf, DeadLetter, EventBody, EventProducer } from '@trawl/streams';
import { itemExtractedEvents, pageFailedEvent, pageFetchedEvent, type PageProcessor } from '@trawl/crawl';
import type { EventMap, EventName, FetchRequested } from '@trawl/schemas';
import type { Logger } from 'pino';

export interface FetchHandlerDeps {
  /** The crawl's PageProcessor (parsing in-line or on threads). */
  readonly processor: Pick<PageProcessor, 'process'>;
  readonly producer: EventProducer;
  readonly logger: Logger;
  /** Jobs known to be over (cancelled, completed): their remaining fetches are skipped. */
  readonly endedJobs: ReadonlySet<string>;
}

export class FetchHandler {
  constructor(private readonly deps: FetchHandlerDeps) {}

  async handle(event: ConsumedEventOf<'FetchRequested'>): Promise<void> {
    const request = event.value;
    if (this.deps.endedJobs.has(request.job_id)) return;
    const page = await this.deps.processor.process(request, { signal: event.signal });
    await Promise.all(itemExtractedEvents(request, page).map((item) => this.emit('ItemExtracted', item)));
    await this.emit('PageFetched', pageFetchedEvent(request, page, event.attempt));
  }

  /** The dead-letter hook: a fetch given up for good still ends, as PageFailed. */
  async onDeadLetter(dead: DeadLetter): Promise<void> {
    if (dead.event?.name !== 'FetchRequested') {
      this.deps.logger.error({ reason: dead.reason, origin: dead.origin, error: dead.errorMessage }, 'undecodable fetch request dead-lettered');
      return;
    }
    const request = dead.event.value as FetchRequested;
    await this.emit('PageFailed', pageFailedEvent(request, dead.error, dead.attempts));
  }

  private emit<N extends EventName>(name: N, event: EventMap[N]): Promise<string> {
    const { event_id, occurred_at, causation_id, ...body } = event as EventMap[N] & { event_id: string; occurred_at: Date; causation_id: string | null };
    return this.deps.producer.emit(name, body as unknown as EventBody<N>, { eventId: event_id, occurredAt: occurred_at, causationId: causation_id });
  }
}
