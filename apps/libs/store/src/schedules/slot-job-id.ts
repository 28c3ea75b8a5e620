/**
 * The job a schedule's slot becomes, named by the slot: the dispatcher dispatching a due slot and
 * the API starting a one-shot schedule at once derive the same id, so the same slot never becomes
 * two jobs.
 */
import { uuidv5 } from '@trawl/base';

export function jobIdForSlot(scheduleId: string, slot: Date): string {
  return uuidv5(`job:${scheduleId}:${slot.toISOString()}`);
}
