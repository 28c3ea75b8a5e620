/**
 * The replay's fast path: builds the shadow tables in bulk instead of row by row.
 *
 * Row-by-row projection spends most of its time maintaining unique indexes on random keys (event
 * ids, fetch ids) — several random B-tree inserts per event. A replay does not need them while it
 * loads: nobody reads the shadow tables yet. So the catch-up appends page, item and log rows to
 * unindexed, unlogged stage tables, each with its event's log position, folds the job-level facts
 * in memory (one small row per job), and at the end settles everything set-wise: first event
 * identity (event-identity.ts: of each event's copies, the one at the lowest log position — the
 * copy the live planner keeps), then DISTINCT ON keeps each fetch's winner with the very
 * precedence of the incremental planner, job counters and times are aggregates of what is left,
 * the HTTP cache is the latest cacheable page per user and URL of the settled pages
 * (cache-row.ts), and the indexes are built once, sorted.
 *
 * The job facts folded in memory go through the same identity rule as they are read (the replay
 * reads each partition in offset order, and a job's events are few). Page events only mark their
 * job as started there: first_page_at and updated_at come from the settled rows, since a copy
 * may carry a time its first occurrence does not.
 *
 * The result must equal what the incremental path (planBatch) builds from the same events; the
 * replay proves it on every run by comparing checksums with the live tables, and the tail read
 * under the swap lock goes through the incremental path on top of it.
 */
import type pg from 'pg';
import type { EventMap } from '@trawl/schemas';
import { emptyJob, foldJobEvent, JOB_ROW_EVENTS, minDate, settle, type JobRow } from '../model/job-row.ts';
import { pageFromFailed, pageFromFetched, type PageRow } from '../model/page-row.ts';
import { itemFromEvent, type ItemRow } from '../model/item-row.ts';
import { isLogged, logLine, type JobEventName, type LoggedEventName } from '../model/log-line.ts';
import type { LogRow } from '../model/plan-batch.ts';
import type { PositionedEvent } from '../model/projectable-event.ts';
import { IDENTITY_COLUMNS, LOG_POSITION_COLUMNS, firstOccurrences, firstOccurrencesSql } from '../model/event-identity.ts';
import { bulkUpsert, type Column } from '../sql/bulk-upsert.ts';
import { copyRows } from '../sql/copy-rows.ts';
import { CACHE_COLUMNS, ITEM_COLUMNS, JOB_COLUMNS, LOG_COLUMNS, PAGE_COLUMNS } from '../sql/row-columns.ts';
import { CACHEABLE_SQL } from '../model/cache-row.ts';
import { BLOCKED_PAGE_SQL, LOG_COUNTERS_SQL } from '../model/job-counters.ts';
import { ident, stageNames, type StagedTables, type TableSet } from '../sql/tables.ts';
import type { ProjectedTopics } from '@trawl/streams';
import { refusedStageRow } from './replay-failure.ts';

type StageLogRow = Omit<LogRow, 'seq'>;
const STAGE_LOG_COLUMNS = LOG_COLUMNS.filter((c) => c.name !== 'seq') as unknown as readonly Column<StageLogRow>[];

/** A stage row: the table's row, and the log position of the event that made it, as two more columns. */
type Staged<R> = R & { log_partition: number; log_offset: bigint };

/** Adds the position to a freshly built row (one object a row: the replay writes a million of them). */
function staged<R extends object>(row: R, e: { readonly partition: number; readonly offset: bigint }): Staged<R> {
  const s = row as Staged<R>;
  s.log_partition = e.partition;
  s.log_offset = e.offset;
  return s;
}

function stagedColumns<R>(columns: readonly Column<R>[]): readonly Column<Staged<R>>[] {
  const [partition, offset] = LOG_POSITION_COLUMNS;
  return [
    ...(columns as readonly Column<Staged<R>>[]),
    { name: partition, type: 'int', get: (s) => s.log_partition },
    { name: offset, type: 'bigint', get: (s) => s.log_offset },
  ];
}

const STAGE_COLUMNS = { pages: stagedColumns(PAGE_COLUMNS), items: stagedColumns(ITEM_COLUMNS), log: stagedColumns(STAGE_LOG_COLUMNS) };

const names = (cols: readonly { name: string }[]) => cols.map((c) => ident(c.name)).join(', ');

export class BulkBuilder {
  private readonly jobs = new Map<string, JobRow>();
  /** Job events folded so far (event-identity.ts): a job's handful, so memory follows the job rows. */
  private readonly jobEventIds = new Set<string>();
  private readonly stage: StagedTables;

  constructor(
    private readonly pool: pg.Pool,
    private readonly shadow: TableSet,
    /** Where the events come from, for an error that names one. */
    private readonly topics: ProjectedTopics,
  ) {
    this.stage = stageNames(shadow);
  }

  /** Unlogged and unindexed: a crashed replay starts over anyway. */
  async createStage(): Promise<void> {
    const position = `ADD COLUMN ${ident(LOG_POSITION_COLUMNS[0])} int NOT NULL, ADD COLUMN ${ident(LOG_POSITION_COLUMNS[1])} bigint NOT NULL`;
    await this.pool.query(`
      CREATE UNLOGGED TABLE ${ident(this.stage.pages)} (LIKE ${ident(this.shadow.pages)} INCLUDING DEFAULTS);
      CREATE UNLOGGED TABLE ${ident(this.stage.items)} (LIKE ${ident(this.shadow.items)} INCLUDING DEFAULTS);
      CREATE UNLOGGED TABLE ${ident(this.stage.log)} (LIKE ${ident(this.shadow.log)} INCLUDING DEFAULTS);
      ALTER TABLE ${ident(this.stage.pages)} ${position};
      ALTER TABLE ${ident(this.stage.items)} ${position};
      ALTER TABLE ${ident(this.stage.log)} DROP COLUMN seq, ${position};
    `);
  }

  async dropStage(db: Pick<pg.ClientBase, 'query'> = this.pool): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS ${ident(this.stage.pages)}, ${ident(this.stage.items)}, ${ident(this.stage.log)}`);
  }

  private jobOf(id: string): JobRow {
    let job = this.jobs.get(id);
    if (!job) this.jobs.set(id, (job = emptyJob(id)));
    return job;
  }

  /**
   * Folds job facts in memory and appends the batch's rows to the stage tables. Batches must come
   * in log order within each partition (readRanges hands them so).
   */
  async add(events: readonly PositionedEvent[]): Promise<void> {
    const pages: Staged<PageRow>[] = [];
    const items: Staged<ItemRow>[] = [];
    const log: Staged<StageLogRow>[] = [];
    const facts = firstOccurrences(events.filter((e) => JOB_ROW_EVENTS.has(e.name)), (_e, id) => this.jobEventIds.has(id)).first;
    for (const e of facts) this.jobEventIds.add(e.value.event_id);
    const folded = new Set(facts);
    for (const e of events) {
      const v = e.value as { job_id?: string; event_id: string; occurred_at: Date };
      if (!v.job_id) continue;
      const job = this.jobOf(v.job_id);
      switch (e.name) {
        case 'CrawlRequested':
        case 'JobDispatched':
        case 'JobCompleted':
        case 'JobFailed':
        case 'JobCancelled':
        case 'JobPaused':
        case 'JobResumed':
          if (!folded.has(e)) continue; // a copy: no fold, and its log line would be dropped by the settle anyway
          foldJobEvent(job, e.name, e.value);
          break;
        case 'PageFetched':
          pages.push(staged(pageFromFetched(e.value as EventMap['PageFetched']), e));
          // Marks the job as started (its status); the exact time is settled from the first copies.
          job.first_page_at = minDate(job.first_page_at, v.occurred_at);
          break;
        case 'PageFailed':
          pages.push(staged(pageFromFailed(e.value as EventMap['PageFailed']), e));
          job.first_page_at = minDate(job.first_page_at, v.occurred_at);
          break;
        case 'ItemExtracted':
          items.push(staged(itemFromEvent(e.value as EventMap['ItemExtracted']), e));
          break;
        default:
          continue;
      }
      const name = e.name as JobEventName;
      if (!isLogged(name)) continue; // items: the page's line counts them (log-line.ts)
      const line = logLine(name, e.value as EventMap[LoggedEventName]);
      log.push({ job_id: v.job_id, ts: v.occurred_at, level: line.level, msg: line.msg, event: name, event_id: v.event_id, data: line.data, log_partition: e.partition, log_offset: e.offset });
    }
    // Three independent appends: no transaction needed, a failed replay drops the stage.
    await Promise.all([
      this.copy('pages', STAGE_COLUMNS.pages, pages, (r) => ({ event: r.ok ? 'PageFetched' : 'PageFailed', event_id: r.event_id, occurred_at: r.fetched_at })),
      this.copy('items', STAGE_COLUMNS.items, items, (r) => ({ event: 'ItemExtracted', event_id: r.event_id, occurred_at: r.extracted_at })),
      this.copy('log', STAGE_COLUMNS.log, log, (r) => ({ event: r.event, event_id: r.event_id, occurred_at: r.ts })),
    ]);
  }

  private async copy<R>(
    table: keyof typeof STAGE_COLUMNS, columns: readonly Column<Staged<R>>[], rows: readonly Staged<R>[],
    eventOf: (row: R) => { event: string; event_id: string; occurred_at: Date },
  ): Promise<void> {
    if (rows.length === 0) return;
    const client = await this.pool.connect();
    try {
      await copyRows(client, this.stage[table], columns, rows);
    } catch (err) {
      const at = (i: number) => {
        const s = rows[i];
        return s && { partition: s.log_partition, offset: s.log_offset, ...eventOf(s) };
      };
      throw refusedStageRow(err, table, this.topics, { at });
    } finally {
      client.release();
    }
  }

  /**
   * Settles the stage into the shadow tables (which must be empty and carry no keys yet): the first
   * copy of each event, winners by the planner's precedence, log lines numbered in time order, job
   * rows with counters and times aggregated from what is left. The stage stays (dropStage), so a
   * key that fails to build can still be traced to its events' log positions.
   */
  async finish(): Promise<void> {
    const s = this.stage;
    const t = this.shadow;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL synchronous_commit = off');
      await client.query('SET LOCAL work_mem = \'256MB\'');
      const pageCols = names(PAGE_COLUMNS);
      // Identity, then pickPage: a success beats a failure, then the later (time, event id). A window
      // rather than DISTINCT ON, whose sort Postgres 15 cannot continue from the identity's order.
      await client.query(`INSERT INTO ${ident(t.pages)} (${pageCols})
        SELECT ${pageCols} FROM (
          SELECT ${pageCols}, row_number() OVER (PARTITION BY job_id COLLATE "C", fetch_id COLLATE "C"
                                                 ORDER BY ok DESC, fetched_at DESC, event_id COLLATE "C" DESC) AS pick
          FROM (${firstOccurrencesSql(ident(s.pages), IDENTITY_COLUMNS.pages, pageCols)}) f) w
        WHERE pick = 1`);
      const itemCols = names(ITEM_COLUMNS);
      // An item's first occurrence is its row.
      await client.query(`INSERT INTO ${ident(t.items)} (${itemCols}) ${firstOccurrencesSql(ident(s.items), IDENTITY_COLUMNS.items, itemCols)}`);
      const logCols = names(STAGE_LOG_COLUMNS);
      await client.query(`INSERT INTO ${ident(t.log)} (seq, ${logCols})
        SELECT row_number() OVER (PARTITION BY job_id COLLATE "C" ORDER BY ts, event_id COLLATE "C"), ${logCols}
        FROM (${firstOccurrencesSql(ident(s.log), IDENTITY_COLUMNS.log, logCols)}) d`);

      await bulkUpsert(client, t.jobs, JOB_COLUMNS, [...this.jobs.values()].map((j) => settle(j)));
      await client.query(`UPDATE ${ident(t.jobs)} j SET
          pages_fetched = a.fetched, pages_failed = a.failed, bytes = a.bytes, pages_blocked = a.blocked
        FROM (SELECT job_id, count(*) FILTER (WHERE ok) AS fetched, count(*) FILTER (WHERE NOT ok) AS failed,
                     coalesce(sum(bytes) FILTER (WHERE ok), 0) AS bytes, count(*) FILTER (WHERE ${BLOCKED_PAGE_SQL}) AS blocked
              FROM ${ident(t.pages)} GROUP BY job_id) a
        WHERE j.job_id = a.job_id`);
      // updated_at: the latest of a job's applied events, every one of which is a log line or an item.
      await client.query(`UPDATE ${ident(t.jobs)} j SET items_extracted = a.n, items_invalid = a.invalid, updated_at = greatest(j.updated_at, a.last)
        FROM (SELECT job_id, count(*) AS n, count(*) FILTER (WHERE jsonb_array_length(errors) > 0) AS invalid, max(extracted_at) AS last
              FROM ${ident(t.items)} GROUP BY job_id) a WHERE j.job_id = a.job_id`);
      // The log's counters (job-counters.ts) with it: duplicates and sessions replaced are counted by line.
      await client.query(`UPDATE ${ident(t.jobs)} j SET log_seq = a.n, updated_at = greatest(j.updated_at, a.last), first_page_at = a.first_page,
          duplicates = a.duplicates, sessions_replaced = a.sessions_replaced
        FROM (SELECT job_id, count(*) AS n, max(ts) AS last, min(ts) FILTER (WHERE event IN ('PageFetched', 'PageFailed')) AS first_page,
                     ${LOG_COUNTERS_SQL.duplicates} AS duplicates, ${LOG_COUNTERS_SQL.sessions_replaced} AS sessions_replaced
              FROM ${ident(t.log)} GROUP BY job_id) a WHERE j.job_id = a.job_id`);
      // settle()'s urls_seen, now that the counters are known.
      await client.query(`UPDATE ${ident(t.jobs)} SET urls_seen = coalesce(completed_urls_seen, pages_fetched + pages_failed)`);
      // The HTTP cache: per user and URL, the latest cacheable page of the user's jobs (cache-row.ts).
      const cacheCols = CACHE_COLUMNS.map((c) => (c.name === 'user_id' ? 'j.user_id' : `p.${ident(c.name)}`)).join(', ');
      await client.query(`INSERT INTO ${ident(t.cache)} (${names(CACHE_COLUMNS)})
        SELECT DISTINCT ON (j.user_id, p.url) ${cacheCols}
        FROM ${ident(t.pages)} p JOIN ${ident(t.jobs)} j ON j.job_id = p.job_id
        WHERE j.user_id IS NOT NULL AND ${CACHEABLE_SQL}
        ORDER BY j.user_id, p.url, p.fetched_at DESC, p.event_id COLLATE "C" DESC`);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
