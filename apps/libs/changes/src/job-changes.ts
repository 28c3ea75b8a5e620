/**
 * A run's changes against its schedule's previous finished run (`GET /jobs/:id/changes`): the
 * baseline chosen (baseline.ts), both runs' pages and items read from projector-pg's read models,
 * compared by the pure rules. Nothing is stored: the answer is a function of the read models,
 * so read models rebuilt by replay give the same answer.
 *
 * Memory is bounded by the listing's bounds, not by the runs (a run can hold 100,000 pages and a
 * million items; invariant 9 wants no user's request to take the shared API's memory):
 * - pages come from Postgres joined by URL in URL order, a batch at a time through a cursor, each
 *   pair compared by comparePage — the rule the page-change detector uses;
 * - items: the unchanged (same key in both runs) are counted in SQL; the others come in URL order,
 *   a page at a time (items of different pages never compare), and are compared by compareItems;
 * - counts are whole, lists stop at their bounds (change-listing.ts).
 * Postgres does the ordering (spilling to disk past `work_mem`); every statement is bounded by the
 * pool's statement timeout. All reads share one read-only snapshot, so the counts of pages and
 * items agree with each other; while it is open a replay's table swap waits for it.
 *
 * Recovering an item's position costs up to 1,000 hashes (itemIndexOf): it is paid only for items
 * that need it (a page with items gone and come, or entries still listed), and the loop yields
 * every few milliseconds of it, so one large listing does not hold the event loop.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { itemIndexOf } from '@trawl/crawl';
import { baselineOf, namedBaseline, type Baseline } from './baseline.ts';
import { ChangeListing, jsonLength, type ChangeLists, type ListBounds } from './change-listing.ts';
import { compareItems, ITEM_CHANGE_KINDS, type ItemChange, type ItemChangeKind, type RunItem } from './compare-items.ts';
import { PAGE_CHANGE_KINDS, pageChange, type PageChange, type PageChangeKind } from './compare-pages.ts';
import { candidateRuns, differingItemsByUrl, pagePairs, runOf, runWithPages, unchangedItemCount } from './read-model.ts';
import { readSnapshot, type Connect, type Db } from './sql-cursor.ts';

export interface JobChanges {
  readonly job_id: string;
  /** Null for a run compared with a named job (`against`, or the job a re-extraction parsed again) that is not a schedule's. */
  readonly schedule_id: string | null;
  readonly status: string;
  /** The run compared against; null when no run of the schedule finished before this one started. */
  readonly previous_job_id: string | null;
  /** False while projector-pg may still change the answer (`waiting_for`). */
  readonly settled: boolean;
  readonly waiting_for: readonly string[];
  /** Whole counts by kind; lists in URL order, cut at the bounds. */
  readonly pages: ChangeLists<PageChangeKind, PageChange>;
  /** Whole counts by kind; lists by page then position, cut at the bounds. */
  readonly items: ChangeLists<ItemChangeKind, ItemChange>;
  readonly items_unchanged: number;
  /** A list holds fewer entries than its kind counts. */
  readonly truncated: boolean;
}

export type JobChangesAnswer =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'not_scheduled' }
  /** `against` names no job in the read model. */
  | { readonly kind: 'against_not_found' }
  | { readonly kind: 'changes'; readonly changes: JobChanges };

export interface JobChangesOptions extends Partial<ListBounds> {
  /**
   * The job to compare with (`?against=`): any job, whoever's — the caller checks it is the user's.
   * Without it: a re-extraction's source job, else the schedule's previous finished run.
   */
  readonly against?: string;
}

/**
 * The default bounds: 1,000 entries (the API's default `limit`) and 4 MiB of estimated JSON per
 * list, so an answer's eight lists stay under ~32 MiB whatever `limit` asks.
 */
export const DEFAULT_LIST_BOUNDS: ListBounds = { limit: 1_000, maxListBytes: 4 * 1024 * 1024 };

/** Hashes of position recovery between two turns of the event loop (~20 ms). */
const HASHES_PER_TURN = 20_000;

const pageSize = (p: PageChange): number => 120 + p.url.length + (p.fetch_id?.length ?? 4) + (p.content_hash?.length ?? 4) + (p.previous_fetch_id?.length ?? 4) + (p.previous_content_hash?.length ?? 4);
const itemSize = (i: ItemChange): number => 140 + i.url.length + (i.item_key?.length ?? 4) + (i.previous_item_key?.length ?? 4) + jsonLength(i.fields) + jsonLength(i.previous_fields);

export async function jobChanges(pool: Connect, jobId: string, options: JobChangesOptions = {}): Promise<JobChangesAnswer> {
  const { against, ...bounds } = options;
  const limits: ListBounds = { ...DEFAULT_LIST_BOUNDS, ...bounds };
  return readSnapshot(pool, async (db) => {
    const run = await runOf(db, jobId);
    if (!run) return { kind: 'not_found' };
    // A baseline named (`against`, or the source of a re-extraction), else the schedule's choice.
    const named = against ?? run.reextract_of;
    let baseline: Baseline;
    if (named) {
      const other = await runWithPages(db, named);
      if (!other) return { kind: 'against_not_found' };
      baseline = namedBaseline(other);
    } else {
      if (run.schedule_id === null) return { kind: 'not_scheduled' };
      const candidates = run.dispatched_at ? await candidateRuns(db, run.schedule_id, run.job_id, run.dispatched_at) : [];
      baseline = baselineOf({ job_id: run.job_id, started_at: run.dispatched_at }, candidates);
    }
    const previousId = baseline.previous?.job_id ?? null;
    const pages = await listPages(db, previousId, run.job_id, limits);
    const items = await listItems(db, previousId, run.job_id, limits);
    return {
      kind: 'changes',
      changes: {
        job_id: run.job_id,
        schedule_id: run.schedule_id,
        status: run.status,
        previous_job_id: previousId,
        settled: baseline.settled,
        waiting_for: baseline.waiting_for,
        pages: pages.result(),
        items: items.result(),
        items_unchanged: await unchangedItemCount(db, previousId, run.job_id),
        truncated: pages.truncated || items.truncated,
      },
    };
  });
}

async function listPages(db: Db, previousId: string | null, currentId: string, bounds: ListBounds): Promise<ChangeListing<PageChangeKind, PageChange>> {
  const listing = new ChangeListing<PageChangeKind, PageChange>(PAGE_CHANGE_KINDS, bounds, pageSize);
  for await (const pairs of pagePairs(db, previousId, currentId)) {
    for (const { url, previous, current } of pairs) {
      const change = pageChange(url, previous, current);
      if (change) listing.add(change);
    }
  }
  return listing;
}

async function listItems(db: Db, previousId: string | null, currentId: string, bounds: ListBounds): Promise<ChangeListing<ItemChangeKind, ItemChange>> {
  const listing = new ChangeListing<ItemChangeKind, ItemChange>(ITEM_CHANGE_KINDS, bounds, itemSize);
  let hashes = 0;
  for await (const page of differingItemsByUrl(db, previousId, currentId)) {
    // A page with items of one run only: all new, or all removed. Their positions only order the
    // list, so once that list is full they are counted, not compared.
    const oneSided: ItemChangeKind | null = page.previous.length === 0 ? 'new' : page.current.length === 0 ? 'removed' : null;
    if (oneSided && !listing.listing(oneSided)) {
      listing.countOnly(oneSided, page.previous.length + page.current.length);
      continue;
    }
    const positions = new Map<RunItem, number | null>();
    for (const item of [...page.previous, ...page.current]) {
      const index = itemIndexOf(item.url, item.fields, item.item_key);
      positions.set(item, index);
      hashes += index === null ? 1_000 : index + 1;
      if (hashes >= HASHES_PER_TURN) {
        hashes = 0;
        await nextTurn();
      }
    }
    for (const change of compareItems(page.previous, page.current, (item) => positions.get(item) ?? null).changes) listing.add(change);
  }
  return listing;
}
