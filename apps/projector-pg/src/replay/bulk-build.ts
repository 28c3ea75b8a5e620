/**
 * The replay's fast path: builds the shadow tables in bulk instead of row by row.
 *
 * Row-by-row projection spends most of its time maintaining unique indexes on random keys (event
 * ids, fetch ids) — several random B-tree inserts per event. A replay does not need them while it
 * loads: nobody reads the shadow tables yet. So the catch-up appends page, item and log rows to
 * unindexed, unlogged stage tables, folds the job-level facts in memory (one small row per job),
 * and at the end settles everything set-wise: DISTINCT ON keeps each fetch's and item's winner
 * with the very precedence of the incremental planner, duplicates of an event id collapse, job
 * counters are aggregates of the winners, and the indexes are built once, sorted.
 *
 * The result must equal what the incremental path (planBatch) builds from the same events; the
 * replay proves it on every run by comparing checksums with the live tables, and the tail read
 * under the swap lock goes through the incremental path on top of it.
 */
import type pg from 'pg';
import type { EventMap } from '@trawl/schemas';
import {
  emptyJob, foldCrawlRequested, foldJobCancelled, foldJobCompleted, foldJobDispatched, foldJobFailed,
  maxDate, minDate, settle, type JobRow,
} from '../model/job-row.ts';
import { pageFromFailed, pageFromFetched, type PageRow } from '../model/page-row.ts';
import { itemFromEvent, type ItemRow } from '../model/item-row.ts';
import { isLogged, logLine, type JobEventName, type LoggedEventName } from '../model/log-line.ts';
import type { LogRow, ProjectableEvent } from '../model/plan-batch.ts';
import { bulkUpsert, type Column } from '../sql/bulk-upsert.ts';
import { copyRows } from '../sql/copy-rows.ts';
import { ITEM_COLUMNS, JOB_COLUMNS, LOG_COLUMNS, PAGE_COLUMNS } from '../sql/row-columns.ts';
import { ident, type TableSet } from '../sql/tables.ts';

type StageLogRow = Omit<LogRow, 'seq'>;
const STAGE_LOG_COLUMNS = LOG_COLUMNS.filter((c) => c.name !== 'seq') as unknown as readonly Column<StageLogRow>[];

function stageNames(t: TableSet): TableSet {
  return { jobs: `${t.jobs}_stage`, pages: `${t.pages}_stage`, items: `${t.items}_stage`, log: `${t.log}_stage` };
}

const names = (cols: readonly { name: string }[]) => cols.map((c) => ident(c.name)).join(', ');

export class BulkBuilder {
  private readonly jobs = new Map<string, JobRow>();
  private readonly stage: TableSet;

  constructor(
    private readonly pool: pg.Pool,
    private readonly shadow: TableSet,
  ) {
    this.stage = stageNames(shadow);
  }

  /** Unlogged and unindexed: a crashed replay starts over anyway. */
  async createStage(): Promise<void> {
    await this.pool.query(`
      CREATE UNLOGGED TABLE ${ident(this.stage.pages)} (LIKE ${ident(this.shadow.pages)} INCLUDING DEFAULTS);
      CREATE UNLOGGED TABLE ${ident(this.stage.items)} (LIKE ${ident(this.shadow.items)} INCLUDING DEFAULTS);
      CREATE UNLOGGED TABLE ${ident(this.stage.log)} (LIKE ${ident(this.shadow.log)} INCLUDING DEFAULTS);
      ALTER TABLE ${ident(this.stage.log)} DROP COLUMN seq;
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

  /** Folds job facts in memory and appends the batch's rows to the stage tables. */
  async add(events: readonly ProjectableEvent[]): Promise<void> {
    const pages: PageRow[] = [];
    const items: ItemRow[] = [];
    const log: StageLogRow[] = [];
    for (const e of events) {
      const v = e.value as { job_id?: string; event_id: string; occurred_at: Date };
      if (!v.job_id) continue;
      const job = this.jobOf(v.job_id);
      switch (e.name) {
        case 'CrawlRequested':
          foldCrawlRequested(job, e.value as EventMap['CrawlRequested']);
          break;
        case 'JobDispatched':
          foldJobDispatched(job, e.value as EventMap['JobDispatched']);
          break;
        case 'JobCompleted':
          foldJobCompleted(job, e.value as EventMap['JobCompleted']);
          break;
        case 'JobFailed':
          foldJobFailed(job, e.value as EventMap['JobFailed']);
          break;
        case 'JobCancelled':
          foldJobCancelled(job, e.value as EventMap['JobCancelled']);
          break;
        case 'PageFetched':
          pages.push(pageFromFetched(e.value as EventMap['PageFetched']));
          job.first_page_at = minDate(job.first_page_at, v.occurred_at);
          break;
        case 'PageFailed':
          pages.push(pageFromFailed(e.value as EventMap['PageFailed']));
          job.first_page_at = minDate(job.first_page_at, v.occurred_at);
          break;
        case 'ItemExtracted':
          items.push(itemFromEvent(e.value as EventMap['ItemExtracted']));
          break;
        default:
          continue;
      }
      job.updated_at = maxDate(job.updated_at, v.occurred_at)!;
      const name = e.name as JobEventName;
      if (!isLogged(name)) continue; // items: the page's line counts them (log-line.ts)
      const line = logLine(name, e.value as EventMap[LoggedEventName]);
      log.push({ job_id: v.job_id, ts: v.occurred_at, level: line.level, msg: line.msg, event: name, event_id: v.event_id, data: line.data });
    }
    // Three independent appends: no transaction needed, a failed replay drops the stage.
    await Promise.all([
      this.copy(this.stage.pages, PAGE_COLUMNS, pages),
      this.copy(this.stage.items, ITEM_COLUMNS, items),
      this.copy(this.stage.log, STAGE_LOG_COLUMNS, log),
    ]);
  }

  private async copy<R>(table: string, columns: readonly Column<R>[], rows: readonly R[]): Promise<void> {
    if (rows.length === 0) return;
    const client = await this.pool.connect();
    try {
      await copyRows(client, table, columns, rows);
    } finally {
      client.release();
    }
  }

  /**
   * Settles the stage into the shadow tables (which must be empty and carry their keys): winners
   * by the planner's precedence, one log line per event id numbered in time order, job rows with
   * counters aggregated from the winners.
   */
  async finish(): Promise<void> {
    const s = this.stage;
    const t = this.shadow;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL synchronous_commit = off');
      await client.query('SET LOCAL work_mem = \'256MB\'');
      // pickPage: a success beats a failure, then the later (time, event id).
      await client.query(`INSERT INTO ${ident(t.pages)} (${names(PAGE_COLUMNS)})
        SELECT DISTINCT ON (job_id COLLATE "C", fetch_id COLLATE "C") ${names(PAGE_COLUMNS)} FROM ${ident(s.pages)}
        ORDER BY job_id COLLATE "C", fetch_id COLLATE "C", ok DESC, fetched_at DESC, event_id COLLATE "C" DESC`);
      // replacesItem: the later (time, event id).
      await client.query(`INSERT INTO ${ident(t.items)} (${names(ITEM_COLUMNS)})
        SELECT DISTINCT ON (job_id COLLATE "C", item_key COLLATE "C") ${names(ITEM_COLUMNS)} FROM ${ident(s.items)}
        ORDER BY job_id COLLATE "C", item_key COLLATE "C", extracted_at DESC, event_id COLLATE "C" DESC`);
      const logCols = names(STAGE_LOG_COLUMNS);
      // Copies of one event share its job and time, so one sort both drops them and numbers the lines.
      await client.query(`INSERT INTO ${ident(t.log)} (seq, ${logCols})
        SELECT row_number() OVER (PARTITION BY job_id COLLATE "C" ORDER BY ts, event_id COLLATE "C"), ${logCols}
        FROM (SELECT DISTINCT ON (job_id COLLATE "C", ts, event_id COLLATE "C") ${logCols} FROM ${ident(s.log)}
              ORDER BY job_id COLLATE "C", ts, event_id COLLATE "C") d`);

      await bulkUpsert(client, t.jobs, JOB_COLUMNS, [...this.jobs.values()].map((j) => settle(j)));
      await client.query(`UPDATE ${ident(t.jobs)} j SET
          pages_fetched = a.fetched, pages_failed = a.failed, bytes = a.bytes
        FROM (SELECT job_id, count(*) FILTER (WHERE ok) AS fetched, count(*) FILTER (WHERE NOT ok) AS failed,
                     coalesce(sum(bytes) FILTER (WHERE ok), 0) AS bytes
              FROM ${ident(t.pages)} GROUP BY job_id) a
        WHERE j.job_id = a.job_id`);
      await client.query(`UPDATE ${ident(t.jobs)} j SET items_extracted = a.n
        FROM (SELECT job_id, count(*) AS n FROM ${ident(t.items)} GROUP BY job_id) a WHERE j.job_id = a.job_id`);
      await client.query(`UPDATE ${ident(t.jobs)} j SET log_seq = a.n
        FROM (SELECT job_id, count(*) AS n FROM ${ident(t.log)} GROUP BY job_id) a WHERE j.job_id = a.job_id`);
      // settle()'s urls_seen, now that the counters are known.
      await client.query(`UPDATE ${ident(t.jobs)} SET urls_seen = coalesce(completed_urls_seen, pages_fetched + pages_failed)`);
      await this.dropStage(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
