import type { EventMap, EventName } from '@trawl/schemas';
import { TOPICS } from '@trawl/streams';
import { redactCredentials } from '@trawl/store/secrets';

/** What the live feed needs of a consumed event (streams' `LiveEvent` has all of it). */
export interface FeedEvent {
  readonly name: EventName;
  readonly value: EventMap[EventName];
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** Starts a live subscription (streams' `subscribeLive`); `ready` resolves once partitions are assigned. */
export type LiveSubscribe = (options: {
  readonly topics: readonly string[];
  readonly onEvent: (event: FeedEvent) => void | Promise<void>;
}) => Promise<{ readonly ready: Promise<void>; stop(): Promise<void> }>;

/** The topics the feed follows (DESIGN.md: the API consumes trawl.jobs and trawl.pages, for the feed only). */
export const FEED_TOPICS = [TOPICS.jobs, TOPICS.pages] as const;

/** The events a client can filter on: those of the feed topics. */
export const FEED_EVENT_NAMES = ['CrawlRequested', 'JobDispatched', 'JobCompleted', 'JobFailed', 'JobCancelled', 'PageFetched', 'PageFailed', 'PageChanged'] as const satisfies readonly EventName[];

/**
 * The wire form: one JSON text per event, made once and sent to every interested client. A job's
 * spec (JobDispatched) shows its credentials as `[sealed]`: the sealed values themselves are for
 * workers, and a shared website's are the operator's.
 */
export function feedMessage(event: FeedEvent, jobId: string): string {
  const value = event.value as { spec?: object | null };
  const data = value.spec ? { ...value, spec: redactCredentials(value.spec) } : event.value;
  return JSON.stringify(
    { type: 'event', event: event.name, job_id: jobId, topic: event.topic, partition: event.partition, offset: event.offset, data },
    (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v),
  );
}
