/**
 * One batch against one table set, inside the caller's transaction: lock and load what the batch
 * touches, plan the rows (pure), write them with one statement per table. The live projector
 * runs it in the transaction that also stores its offsets; a replay runs it against shadow tables.
 */
import type pg from 'pg';
import { batchKeys, planBatch, type BatchPlan, type ProjectableEvent, type StoredState } from '../model/plan-batch.ts';
import type { ItemVersion } from '../model/item-row.ts';
import { itemKey } from '../model/item-row.ts';
import { pageKey, type PageRow } from '../model/page-row.ts';
import type { JobRow } from '../model/job-row.ts';
import { bulkUpsert } from '../sql/bulk-upsert.ts';
import { ITEM_COLUMNS, JOB_COLUMNS, LOG_COLUMNS, PAGE_COLUMNS, jobFromDb, pageFromDb } from '../sql/row-columns.ts';
import { ident, type TableSet } from '../sql/tables.ts';

export interface BatchResult {
  readonly events: number;
  readonly applied: number;
  readonly duplicates: number;
  readonly rows: { readonly jobs: number; readonly pages: number; readonly items: number; readonly log: number };
}

export async function loadState(client: pg.ClientBase, t: TableSet, events: readonly ProjectableEvent[]): Promise<StoredState> {
  const keys = batchKeys(events);
  const jobs = new Map<string, JobRow>();
  const loggedEventIds = new Set<string>();
  const pages = new Map<string, PageRow>();
  const items = new Map<string, ItemVersion>();
  if (keys.jobIds.length === 0) return { jobs, loggedEventIds, pages, items };

  // Every job of the batch gets a row first, so that the FOR UPDATE below locks new jobs too:
  // two writers of one new job (a rebalance overlap) then queue instead of overwriting each other.
  await client.query(
    `INSERT INTO ${ident(t.jobs)} (job_id, status, updated_at) SELECT id, 'pending', 'epoch' FROM unnest($1::text[]) AS id ON CONFLICT (job_id) DO NOTHING`,
    [keys.jobIds],
  );
  const jobRows = await client.query(`SELECT * FROM ${ident(t.jobs)} WHERE job_id = ANY($1::text[]) ORDER BY job_id FOR UPDATE`, [keys.jobIds]);
  for (const r of jobRows.rows) jobs.set(String(r.job_id), jobFromDb(r));

  const logged = await client.query<{ event_id: string }>(`SELECT event_id FROM ${ident(t.log)} WHERE event_id = ANY($1::text[])`, [keys.eventIds]);
  for (const r of logged.rows) loggedEventIds.add(r.event_id);

  if (keys.pages.length > 0) {
    const res = await client.query(
      `SELECT p.* FROM ${ident(t.pages)} p JOIN unnest($1::text[], $2::text[]) AS k(job_id, fetch_id) USING (job_id, fetch_id)`,
      [keys.pages.map((k) => k[0]), keys.pages.map((k) => k[1])],
    );
    for (const r of res.rows) pages.set(pageKey(String(r.job_id), String(r.fetch_id)), pageFromDb(r));
  }
  if (keys.items.length > 0) {
    const res = await client.query<{ job_id: string; item_key: string; extracted_at: Date; event_id: string }>(
      `SELECT i.job_id, i.item_key, i.extracted_at, i.event_id FROM ${ident(t.items)} i
         JOIN unnest($1::text[], $2::text[]) AS k(job_id, item_key) USING (job_id, item_key)`,
      [keys.items.map((k) => k[0]), keys.items.map((k) => k[1])],
    );
    for (const r of res.rows) items.set(itemKey(r.job_id, r.item_key), { extracted_at: r.extracted_at, event_id: r.event_id });
  }
  return { jobs, loggedEventIds, pages, items };
}

export async function writePlan(client: pg.ClientBase, t: TableSet, plan: BatchPlan): Promise<void> {
  await bulkUpsert(client, t.jobs, JOB_COLUMNS, plan.jobs, { key: ['job_id'] });
  await bulkUpsert(client, t.pages, PAGE_COLUMNS, plan.pages, { key: ['job_id', 'fetch_id'] });
  await bulkUpsert(client, t.items, ITEM_COLUMNS, plan.items, { key: ['job_id', 'item_key'] });
  await bulkUpsert(client, t.log, LOG_COLUMNS, plan.log);
}

/** Applies a batch of decoded events to the tables `t`; the caller owns the transaction. */
export async function applyBatch(client: pg.ClientBase, t: TableSet, events: readonly ProjectableEvent[]): Promise<BatchResult> {
  const stored = await loadState(client, t, events);
  const plan = planBatch(stored, events);
  await writePlan(client, t, plan);
  return {
    events: events.length,
    applied: plan.applied,
    duplicates: plan.duplicates,
    rows: { jobs: plan.jobs.length, pages: plan.pages.length, items: plan.items.length, log: plan.log.length },
  };
}
