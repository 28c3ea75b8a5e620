import { uuidV5 } from '@trawl/schemas';

const EVENT_ID_NAMESPACE = '8c4b1f6e-2d7a-4e93-b1c5-6a0f3e9d2b71';

/**
 * Deterministic event ids: what identifies an event (job, kind, and the fetch id or URL it is about)
 * gives its id. A frontier that crashes after producing and before committing re-emits identical
 * events on restart, and consumers drop the duplicates by id.
 */
export function eventId(jobId: string, kind: string, key = ''): string {
  return uuidV5(`${kind}\n${jobId}\n${key}`, EVENT_ID_NAMESPACE);
}
