import { uuidV5, type EventName } from '@trawl/schemas';

/**
 * The crawl loop's event ids (frontier and worker): deterministic, so a frontier that crashes after
 * producing and before committing re-emits identical events on restart, and consumers drop the
 * duplicates by id.
 *
 * They have their own UUID namespace and layout, unlike `eventId(kind, ...parts)` of
 * `@trawl/streams` (the services' ids): both are on the logs already, and an id must never change,
 * so the two stay apart. The argument is an object so that neither can be called in the other's
 * place: `eventId` takes an event name first, `jobEventId` a `{ jobId, kind, key }`; a wrong
 * auto-import does not compile.
 */
const JOB_EVENT_ID_NAMESPACE = '8c4b1f6e-2d7a-4e93-b1c5-6a0f3e9d2b71';

/**
 * What an id is about: an event name, or `FetchLost`, the frontier's PageFailed for a fetch that had
 * no outcome in time (a kind of its own, so it never collides with the worker's PageFailed).
 */
export type JobEventKind = EventName | 'FetchLost';

export interface JobEventIdParts {
  readonly jobId: string;
  readonly kind: JobEventKind;
  /** The fetch id or item key the event is about; absent for the job's own events. */
  readonly key?: string;
}

/** The id of a crawl-loop event: job, kind, and the fetch id or item key it is about. */
export function jobEventId({ jobId, kind, key = '' }: JobEventIdParts): string {
  return uuidV5(`${kind}\n${jobId}\n${key}`, JOB_EVENT_ID_NAMESPACE);
}
