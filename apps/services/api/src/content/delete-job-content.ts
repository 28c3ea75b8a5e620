/**
 * Deletes a job's stored content: the objects of its pages that no other live job names
 * (data/job-content.ts), recorded in `job_content_deletions`. Used by `DELETE /jobs/:id/content`
 * and by the retention sweep.
 *
 * Order: the deletion is claimed (recorded as under way) before any object goes, so that from then
 * on this job's pages keep no object alive for another job being deleted at the same time; it is
 * marked finished after the store has deleted them. A process that dies in between leaves a claim
 * the sweep takes again later; deleting an object twice is harmless.
 *
 * Known race (docs/reliability.md): an object another job's worker has just named, its PageFetched
 * not projected yet, is not seen as shared and can be deleted under it.
 */
import type { ContentStore } from '@trawl/content';
import type { Pool } from '@trawl/store';
import { claimDeletion, contentOnlyOf, finishDeletion, type DeletionReason } from '../data/job-content.ts';

/** A claim older than this whose deletion never finished belongs to a process that died. */
export const STALE_DELETION_MS = 10 * 60_000;

/** Objects deleted, or null when another process holds this job's deletion (the sweep only). */
export async function deleteJobContent(db: Pool, store: Pick<ContentStore, 'delete'>, jobId: string, reason: DeletionReason): Promise<number | null> {
  if (!(await claimDeletion(db, jobId, reason, STALE_DELETION_MS))) return null;
  const hashes = await contentOnlyOf(db, jobId);
  await store.delete(hashes);
  await finishDeletion(db, jobId, hashes.length);
  return hashes.length;
}
