/**
 * The read models computed in memory by the same pure planner, batch by batch: what the tables
 * must hold after the same events. Tests compare the database against it.
 */
import type { JobRow } from './job-row.ts';
import type { PageRow } from './page-row.ts';
import type { ItemRow } from './item-row.ts';
import { itemKey } from './item-row.ts';
import { pageKey } from './page-row.ts';
import { planBatch, type LogRow } from './plan-batch.ts';
import type { ProjectableEvent } from './projectable-event.ts';
import { cacheKey, isCacheable, pickCacheRow, type CacheRow } from './cache-row.ts';

export class InMemoryReadModel {
  readonly jobs = new Map<string, JobRow>();
  readonly pages = new Map<string, PageRow>();
  readonly items = new Map<string, ItemRow>();
  readonly log: LogRow[] = [];
  readonly cache = new Map<string, CacheRow>();
  private readonly logged = new Set<string>();

  apply(events: readonly ProjectableEvent[]): void {
    const plan = planBatch({ jobs: this.jobs, loggedEventIds: this.logged, pages: this.pages, items: this.items, unownedPages: this.unownedPages(events) }, events);
    for (const j of plan.jobs) this.jobs.set(j.job_id, j);
    for (const p of plan.pages) this.pages.set(pageKey(p.job_id, p.fetch_id), p);
    for (const i of plan.items) this.items.set(itemKey(i.job_id, i.item_key), i);
    for (const l of plan.log) {
      this.log.push(l);
      this.logged.add(l.event_id);
    }
    // The database's "replace only if later" upsert (writePlan).
    for (const c of plan.cache) this.cache.set(cacheKey(c.user_id, c.url), pickCacheRow(this.cache.get(cacheKey(c.user_id, c.url)), c));
  }

  /** What loadState reads: the cacheable pages of jobs without a user yet (the planner offers them if the batch brings one). */
  private unownedPages(events: readonly ProjectableEvent[]): Map<string, PageRow[]> {
    const jobIds = new Set(events.map((e) => (e.value as { job_id?: string }).job_id).filter((id): id is string => !!id && (this.jobs.get(id)?.user_id ?? null) === null));
    const out = new Map<string, PageRow[]>();
    for (const p of this.pages.values()) {
      if (!jobIds.has(p.job_id) || !isCacheable(p)) continue;
      out.set(p.job_id, [...(out.get(p.job_id) ?? []), p]);
    }
    return out;
  }
}
