/**
 * A run's changes against its schedule's previous finished run (`GET /jobs/:id/changes`): the
 * baseline chosen (baseline.ts), both runs' pages and items read from projector-pg's read models,
 * compared by the pure functions. Nothing is stored: the answer is a function of the read models,
 * so read models rebuilt by replay give the same answer.
 */
import { baselineOf } from './baseline.ts';
import { compareItems, type ItemChange } from './compare-items.ts';
import { comparePages, type PageChange } from './compare-pages.ts';
import { candidateRuns, itemsOf, pagesOf, runOf, type Db } from './read-model.ts';

export interface JobChanges {
  readonly job_id: string;
  readonly schedule_id: string;
  readonly status: string;
  /** The run compared against; null when no run of the schedule finished before this one started. */
  readonly previous_job_id: string | null;
  /** False while projector-pg may still change the answer (`waiting_for`). */
  readonly settled: boolean;
  readonly waiting_for: readonly string[];
  readonly pages: readonly PageChange[];
  readonly items: readonly ItemChange[];
  readonly items_unchanged: number;
}

export type JobChangesAnswer = { readonly kind: 'not_found' } | { readonly kind: 'not_scheduled' } | { readonly kind: 'changes'; readonly changes: JobChanges };

export async function jobChanges(db: Db, jobId: string): Promise<JobChangesAnswer> {
  const run = await runOf(db, jobId);
  if (!run) return { kind: 'not_found' };
  if (run.schedule_id === null) return { kind: 'not_scheduled' };
  const candidates = run.dispatched_at ? await candidateRuns(db, run.schedule_id, run.job_id, run.dispatched_at) : [];
  const baseline = baselineOf({ job_id: run.job_id, started_at: run.dispatched_at }, candidates);
  const previousId = baseline.previous?.job_id ?? null;
  const [pagesBefore, pagesNow, itemsBefore, itemsNow] = await Promise.all([
    previousId ? pagesOf(db, previousId) : [],
    pagesOf(db, run.job_id),
    previousId ? itemsOf(db, previousId) : [],
    itemsOf(db, run.job_id),
  ]);
  const items = compareItems(itemsBefore, itemsNow);
  return {
    kind: 'changes',
    changes: {
      job_id: run.job_id,
      schedule_id: run.schedule_id,
      status: run.status,
      previous_job_id: previousId,
      settled: baseline.settled,
      waiting_for: baseline.waiting_for,
      pages: comparePages(pagesBefore, pagesNow),
      items: items.changes,
      items_unchanged: items.unchanged,
    },
  };
}
