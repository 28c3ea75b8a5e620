/**
 * The reads change tracking makes of projector-pg's read models (`jobs`, `job_pages`, `job_items`;
 * apps/services/projector-pg/READ-MODEL.md). Read only, by these table names, so a replay's swap
 * is seen at the next query.
 */
import type { ScheduleRun } from './baseline.ts';
import type { RunItem } from './compare-items.ts';
import type { RunPage } from './compare-pages.ts';
import { cursorBatches, type Db } from './sql-cursor.ts';

/** A run with its schedule (null: not started by a schedule, or its JobDispatched not projected yet). */
export interface RunRow extends ScheduleRun {
  readonly schedule_id: string | null;
  /**
   * Its JobDispatched's time. A row can exist before its JobDispatched is projected (a page event
   * read first); until then its schedule is unknown, and it is compared against nothing yet.
   */
  readonly dispatched_at: Date | null;
  /** The job a re-extraction parsed again (its spec's `reextract_of`); null for a crawl. */
  readonly reextract_of: string | null;
}

const RUN_COLUMNS = `job_id::text AS job_id, schedule_id::text AS schedule_id, status, dispatched_at,
  coalesce(dispatched_at, first_page_at, requested_at) AS started_at, finished_at AS ended_at, completed_urls_seen,
  spec->>'reextract_of' AS reextract_of`;

const PAGES_RECORDED = `CASE WHEN status = 'finished' THEN (SELECT count(*)::int FROM job_pages p WHERE p.job_id = c.job_id) ELSE 0 END`;

export async function runOf(db: Db, jobId: string): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS}, 0 AS pages_recorded FROM jobs WHERE job_id::text = $1`, [jobId]);
  return rows[0];
}

/** A run with its page rows counted (when finished): a baseline named rather than chosen. */
export async function runWithPages(db: Db, jobId: string): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>(`SELECT c.*, ${PAGES_RECORDED} AS pages_recorded FROM (SELECT ${RUN_COLUMNS} FROM jobs WHERE job_id::text = $1) c`, [jobId]);
  return rows[0];
}

/**
 * The runs of a schedule that can decide the baseline of a run started at `startedAt` (baseline.ts):
 * the latest finished before it, and those started before it that have not ended. Both come from
 * the `jobs (schedule_id)` index, however many runs the schedule has had.
 */
export async function candidateRuns(db: Db, scheduleId: string, jobId: string, startedAt: Date): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>(
    `WITH c AS (
       (SELECT ${RUN_COLUMNS} FROM jobs
        WHERE schedule_id::text = $1 AND job_id::text <> $2 AND status = 'finished' AND finished_at < $3
        ORDER BY finished_at DESC, coalesce(dispatched_at, first_page_at, requested_at) DESC, job_id::text DESC LIMIT 1)
       UNION ALL
       (SELECT ${RUN_COLUMNS} FROM jobs
        WHERE schedule_id::text = $1 AND job_id::text <> $2 AND status IN ('pending', 'running', 'paused')
          AND coalesce(dispatched_at, first_page_at, requested_at) < $3)
     )
     SELECT c.*, ${PAGES_RECORDED} AS pages_recorded FROM c`,
    [scheduleId, jobId, startedAt],
  );
  return rows;
}

export async function pageOf(db: Db, jobId: string, fetchId: string): Promise<RunPage | undefined> {
  const { rows } = await db.query<RunPage>(
    'SELECT fetch_id::text AS fetch_id, url, ok, content_hash FROM job_pages WHERE job_id::text = $1 AND fetch_id::text = $2',
    [jobId, fetchId],
  );
  return rows[0];
}

/** A URL of either run with its page in each (undefined: that run did not fetch it, or it failed for good). */
export interface PagePair {
  readonly url: string;
  readonly previous: RunPage | undefined;
  readonly current: RunPage | undefined;
}

/**
 * Both runs' fetched pages joined by URL, in URL order (bytewise, as JavaScript orders ASCII). A
 * run's duplicate rows of a URL, if any, give one (failed rows are absent anyway, as comparePage
 * counts them).
 */
const PAGE_PAIRS = `
  WITH cur AS (SELECT DISTINCT ON (url) url, fetch_id, content_hash FROM job_pages WHERE job_id = $2 AND ok ORDER BY url, fetch_id),
       prev AS (SELECT DISTINCT ON (url) url, fetch_id, content_hash FROM job_pages WHERE job_id = $1 AND ok ORDER BY url, fetch_id)
  SELECT coalesce(cur.url, prev.url) AS url, cur.fetch_id, cur.content_hash, prev.fetch_id AS previous_fetch_id, prev.content_hash AS previous_content_hash
  FROM cur FULL JOIN prev ON prev.url = cur.url
  ORDER BY coalesce(cur.url, prev.url) COLLATE "C"`;

interface PagePairRow {
  url: string;
  fetch_id: string | null;
  content_hash: string | null;
  previous_fetch_id: string | null;
  previous_content_hash: string | null;
}

/** Page rows are small (a URL and two hashes): a fixed batch. */
const PAGE_BATCH = 2_000;

/** The page pairs of two runs (`previousId` null: the first run, every page new), a batch at a time. */
export async function* pagePairs(db: Db, previousId: string | null, currentId: string): AsyncGenerator<PagePair[]> {
  for await (const rows of cursorBatches<PagePairRow>(db, 'trawl_changes_pages', PAGE_PAIRS, [previousId, currentId], () => PAGE_BATCH)) {
    yield rows.map((r) => ({
      url: r.url,
      previous: r.previous_fetch_id === null ? undefined : { fetch_id: r.previous_fetch_id, url: r.url, ok: true, content_hash: r.previous_content_hash },
      current: r.fetch_id === null ? undefined : { fetch_id: r.fetch_id, url: r.url, ok: true, content_hash: r.content_hash },
    }));
  }
}

/** Items with the same key in both runs: unchanged, counted only. */
export async function unchangedItemCount(db: Db, previousId: string | null, currentId: string): Promise<number> {
  if (previousId === null) return 0;
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM job_items c JOIN job_items p ON p.job_id = $1 AND p.item_key = c.item_key WHERE c.job_id = $2`,
    [previousId, currentId],
  );
  return rows[0]!.n;
}

/** A page's items that only one of the runs has (by key), of each run. */
export interface UrlItems {
  readonly url: string;
  readonly previous: RunItem[];
  readonly current: RunItem[];
}

/**
 * The items whose key only one run has, by URL: items of different pages never compare (a slot is
 * a page and a position), so one page's items at a time are all a comparison holds.
 */
const DIFFERING_ITEMS = `
  SELECT d.side, d.item_key, d.url, d.fields::text AS fields FROM (
    SELECT 0 AS side, p.item_key, p.url, p.fields FROM job_items p
    WHERE p.job_id = $1 AND NOT EXISTS (SELECT 1 FROM job_items c WHERE c.job_id = $2 AND c.item_key = p.item_key)
    UNION ALL
    SELECT 1 AS side, c.item_key, c.url, c.fields FROM job_items c
    WHERE c.job_id = $2 AND NOT EXISTS (SELECT 1 FROM job_items p WHERE p.job_id = $1 AND p.item_key = c.item_key)
  ) d
  ORDER BY d.url COLLATE "C", d.side, d.item_key COLLATE "C"`;

interface ItemRow {
  side: 0 | 1;
  item_key: string;
  url: string;
  fields: string;
}

/**
 * Item rows are up to an event's size each (fields of a page up to the parser's 4 MiB together),
 * so a batch is sized by the bytes of the one before: about ITEM_BATCH_BYTES, from 16 to 2,000
 * rows, starting small.
 */
const ITEM_BATCH_BYTES = 8 * 1024 * 1024;
const itemBatchSize = (previous: readonly ItemRow[] | null): number => {
  if (previous === null) return 64;
  const bytes = previous.reduce((n, r) => n + r.fields.length + r.url.length + r.item_key.length, 0);
  return Math.min(2_000, Math.max(16, Math.floor(ITEM_BATCH_BYTES / Math.max(1, bytes / previous.length))));
};

/** The items only one run has, a page (URL) at a time, in URL order. */
export async function* differingItemsByUrl(db: Db, previousId: string | null, currentId: string): AsyncGenerator<UrlItems> {
  let group: UrlItems | undefined;
  for await (const rows of cursorBatches<ItemRow>(db, 'trawl_changes_items', DIFFERING_ITEMS, [previousId, currentId], itemBatchSize)) {
    for (const r of rows) {
      if (group && group.url !== r.url) {
        yield group;
        group = undefined;
      }
      group ??= { url: r.url, previous: [], current: [] };
      const item: RunItem = { item_key: r.item_key, url: r.url, fields: JSON.parse(r.fields) as Record<string, string> };
      (r.side === 0 ? group.previous : group.current).push(item);
    }
  }
  if (group) yield group;
}
