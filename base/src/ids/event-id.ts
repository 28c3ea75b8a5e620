/**
 * Deterministic event ids: UUIDv5 of what identifies an event, so that a process that crashes and
 * re-emits the same decision produces the same event_id, and read models absorb the duplicate.
 *
 * The crawl loop (frontier, worker) has ids of its own, `jobEventId({ jobId, kind, key })` of
 * `@trawl/crawl`, in another namespace: both are on the logs already and an id must never change, so
 * the two stay apart. `eventId` takes an event name first, typed, so a job id put in its place (the
 * other function's order) does not compile.
 */
import { randomUUID } from 'node:crypto';
import { uuidV5, type EventName } from '@trawl/schemas';

/** Trawl's UUIDv5 namespace (a fixed random UUID). */
export const TRAWL_NAMESPACE = '3f6c8f4e-2b1d-4c5a-9e7f-0d8b6a4c2e1f';

/** UUIDv5 of `name` in Trawl's namespace (or another). */
export function uuidv5(name: string, namespace: string = TRAWL_NAMESPACE): string {
  return uuidV5(name, namespace);
}

/**
 * A deterministic id of the given parts, for what is not an event (a fixture's job and fetch ids).
 * `eventId(kind, ...parts)` is `stableId(kind, ...parts)`, so the two never give one id for two things
 * unless they are given the same parts.
 */
export function stableId(...parts: readonly (string | number)[]): string {
  return uuidv5(parts.join('\u0000'));
}

/** The id of an event identified by its type and the given parts (job id, URL, slot…). */
export function eventId(kind: EventName, ...parts: readonly (string | number)[]): string {
  return stableId(kind, ...parts);
}

/** For events no retry can re-emit (a user's one-off request, for instance). */
export function randomEventId(): string {
  return randomUUID();
}
