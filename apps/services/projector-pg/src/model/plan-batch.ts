/**
 * The projection as a pure function: given the stored state a batch touches and the batch's
 * events, what rows to write. No I/O here, so the whole event → row mapping is unit-tested, and
 * the same code computes read models in memory for tests and for replay verification.
 *
 * A batch's effect is idempotent. First event identity (event-identity.ts) leaves out every copy
 * of an event applied before — by this batch, or as the stored state shows: a logged event whose
 * id is in the job log, an item whose key has a row — taking the batch in log order, so the first
 * copy is the one kept. Only then are the events sorted by time and folded. So an event
 * re-emitted under a new offset (a producer that crashed after sending) counts once, as in a
 * replay; offsets in the same transaction take care of plain redelivery.
 */
import type { EventMap } from '@trawl/schemas';
import { emptyJob, foldJobEvent, maxDate, minDate, settle, type JobRow } from './job-row.ts';
import { pageFromFailed, pageFromFetched, pageKey, pickPage, type PageRow } from './page-row.ts';
import { itemFromEvent, itemKey, type ItemRow } from './item-row.ts';
import { firstOccurrences } from './event-identity.ts';
import { cacheKey, cacheRowOf, isCacheable, pickCacheRow, type CacheRow } from './cache-row.ts';
import { isLogged, logLine, type JobEventName, type LoggedEventName, type LogLevel } from './log-line.ts';
import { contribution, logLineCounters } from './job-counters.ts';
import type { ProjectableEvent } from './projectable-event.ts';

export interface LogRow {
  job_id: string;
  seq: number;
  ts: Date;
  level: LogLevel;
  msg: string;
  event: LoggedEventName;
  event_id: string;
  data: Readonly<Record<string, unknown>>;
}

/** The stored rows a batch touches, loaded (and locked) before planning. */
export interface StoredState {
  readonly jobs: ReadonlyMap<string, JobRow>;
  readonly loggedEventIds: ReadonlySet<string>;
  readonly pages: ReadonlyMap<string, PageRow>;
  /** The items stored, by itemKey: a key is an item's identity (event-identity.ts). */
  readonly items: Pick<ReadonlySet<string>, 'has'>;
  /**
   * The stored cacheable pages of jobs whose user this batch makes known (their pages came first):
   * they become HTTP cache entries now (cache-row.ts). By job id; absent for every other job.
   */
  readonly unownedPages?: ReadonlyMap<string, readonly PageRow[]>;
}

export interface BatchPlan {
  readonly jobs: JobRow[];
  readonly pages: PageRow[];
  readonly items: ItemRow[];
  readonly log: LogRow[];
  /** HTTP cache candidates, one per (user, URL): each replaces the stored row only if it is later (cache-row.ts). */
  readonly cache: CacheRow[];
  /** Events that changed something; the rest were copies of events applied before (event-identity.ts). */
  readonly applied: number;
  readonly duplicates: number;
}

export interface BatchKeys {
  readonly jobIds: string[];
  /** Of the logged events: whether the job log holds them already. */
  readonly eventIds: string[];
  readonly pages: [job_id: string, fetch_id: string][];
  readonly items: [job_id: string, item_key: string][];
}

/** The events the read models are made of: the live projector's canHandle. */
export const PROJECTED_EVENTS: readonly JobEventName[] = [
  'CrawlRequested', 'JobDispatched', 'PageFetched', 'PageFailed', 'ItemExtracted', 'JobCompleted', 'JobFailed', 'JobCancelled',
  'JobPaused', 'JobResumed',
];

const JOB_EVENTS: ReadonlySet<string> = new Set(PROJECTED_EVENTS);

function isJobEvent(e: ProjectableEvent): e is { name: JobEventName; value: EventMap[JobEventName] } {
  return JOB_EVENTS.has(e.name);
}

/** The keys whose stored rows planBatch needs (jobs sorted, so row locks are taken in one order). */
export function batchKeys(events: readonly ProjectableEvent[]): BatchKeys {
  const jobIds = new Set<string>();
  const eventIds = new Set<string>();
  const pages = new Map<string, [string, string]>();
  const items = new Map<string, [string, string]>();
  for (const e of events) {
    if (!isJobEvent(e)) continue;
    const v = e.value;
    jobIds.add(v.job_id);
    if (isLogged(e.name)) eventIds.add(v.event_id);
    if (e.name === 'PageFetched' || e.name === 'PageFailed') {
      const p = v as EventMap['PageFetched'];
      pages.set(pageKey(p.job_id, p.fetch_id), [p.job_id, p.fetch_id]);
    } else if (e.name === 'ItemExtracted') {
      const i = v as EventMap['ItemExtracted'];
      items.set(itemKey(i.job_id, i.item_key), [i.job_id, i.item_key]);
    }
  }
  return { jobIds: [...jobIds].sort(), eventIds: [...eventIds], pages: [...pages.values()], items: [...items.values()] };
}

/** Log order within a batch: by event time, so a replay's one big batch reads like the crawl did. */
function byTime(a: ProjectableEvent, b: ProjectableEvent): number {
  const d = a.value.occurred_at.getTime() - b.value.occurred_at.getTime();
  return d !== 0 ? d : a.value.event_id < b.value.event_id ? -1 : a.value.event_id > b.value.event_id ? 1 : 0;
}

export function planBatch(stored: StoredState, events: readonly ProjectableEvent[]): BatchPlan {
  const jobs = new Map<string, JobRow>();
  const pages = new Map<string, PageRow>();
  const items = new Map<string, ItemRow>();
  const log: LogRow[] = [];

  const jobOf = (id: string): JobRow => {
    let job = jobs.get(id);
    if (!job) {
      const stored_ = stored.jobs.get(id);
      job = stored_ ? { ...stored_ } : emptyJob(id);
      jobs.set(id, job);
    }
    return job;
  };

  // Identity before time: the copies are dropped in log order, and only the events left are sorted.
  const { first, copies } = firstOccurrences(events.filter(isJobEvent), (e) => {
    if (e.name !== 'ItemExtracted') return stored.loggedEventIds.has(e.value.event_id);
    const v = e.value as EventMap['ItemExtracted'];
    return stored.items.has(itemKey(v.job_id, v.item_key));
  });

  for (const e of first.sort(byTime)) {
    const v = e.value;
    const job = jobOf(v.job_id);
    switch (e.name) {
      case 'CrawlRequested':
      case 'JobDispatched':
      case 'JobCompleted':
      case 'JobFailed':
      case 'JobCancelled':
      case 'JobPaused':
      case 'JobResumed':
        foldJobEvent(job, e.name, v);
        break;
      case 'PageFetched':
      case 'PageFailed': {
        const row = e.name === 'PageFetched' ? pageFromFetched(v as EventMap['PageFetched']) : pageFromFailed(v as EventMap['PageFailed']);
        const key = pageKey(row.job_id, row.fetch_id);
        const before = pages.get(key) ?? stored.pages.get(key);
        const winner = pickPage(before, row);
        if (winner !== before) {
          const was = contribution(before);
          const now = contribution(winner);
          job.pages_fetched += now.fetched - was.fetched;
          job.pages_failed += now.failed - was.failed;
          job.bytes += now.bytes - was.bytes;
          job.pages_blocked += now.blocked - was.blocked;
          pages.set(key, winner);
        }
        job.first_page_at = minDate(job.first_page_at, v.occurred_at);
        break;
      }
      case 'ItemExtracted': {
        // A first occurrence: the key has no row yet (event-identity.ts).
        const row = itemFromEvent(v as EventMap['ItemExtracted']);
        items.set(itemKey(row.job_id, row.item_key), row);
        job.items_extracted += 1;
        if (row.errors.length > 0) job.items_invalid += 1;
        break;
      }
    }
    job.updated_at = maxDate(job.updated_at, v.occurred_at)!;
    if (isLogged(e.name)) {
      const line = logLine(e.name, v as EventMap[LoggedEventName]);
      const counted = logLineCounters(e.name, line.data);
      job.duplicates += counted.duplicates;
      job.sessions_replaced += counted.sessions_replaced;
      job.log_seq += 1;
      log.push({ job_id: v.job_id, seq: job.log_seq, ts: v.occurred_at, level: line.level, msg: line.msg, event: e.name, event_id: v.event_id, data: line.data });
    }
    settle(job);
  }

  return { jobs: [...jobs.values()], pages: [...pages.values()], items: [...items.values()], log, cache: cacheCandidates(stored, jobs, pages), applied: first.length, duplicates: copies };
}

/** The batch's HTTP cache candidates: the cacheable pages it wrote, and those of jobs whose user it made known. */
function cacheCandidates(stored: StoredState, jobs: ReadonlyMap<string, JobRow>, pages: ReadonlyMap<string, PageRow>): CacheRow[] {
  const out = new Map<string, CacheRow>();
  const offer = (p: PageRow, user: string | null): void => {
    if (user === null || !isCacheable(p)) return;
    const key = cacheKey(user, p.url);
    out.set(key, pickCacheRow(out.get(key), cacheRowOf(p, user)));
  };
  for (const p of pages.values()) offer(p, jobs.get(p.job_id)!.user_id);
  for (const [jobId, unowned] of stored.unownedPages ?? []) {
    const user = jobs.get(jobId)?.user_id ?? null;
    for (const p of unowned) if (!pages.has(pageKey(p.job_id, p.fetch_id))) offer(p, user);
  }
  return [...out.values()];
}
