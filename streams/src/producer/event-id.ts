/**
 * Deterministic event ids: UUIDv5 of what identifies an event, so that a process that crashes and
 * re-emits the same decision produces the same event_id, and read models absorb the duplicate.
 */
import { randomUUID } from 'node:crypto';
import { uuidV5 } from '@trawl/schemas';

/** Trawl's UUIDv5 namespace (a fixed random UUID). */
export const TRAWL_NAMESPACE = '3f6c8f4e-2b1d-4c5a-9e7f-0d8b6a4c2e1f';

/** UUIDv5 of `name` in Trawl's namespace (or another). */
export function uuidv5(name: string, namespace: string = TRAWL_NAMESPACE): string {
  return uuidV5(name, namespace);
}

/** The id of an event identified by its type and the given parts (job id, URL, slot…). */
export function eventId(kind: string, ...parts: readonly (string | number)[]): string {
  return uuidv5([kind, ...parts].join('\u0000'));
}

/** For events no retry can re-emit (a user's one-off request, for instance). */
export function randomEventId(): string {
  return randomUUID();
}
