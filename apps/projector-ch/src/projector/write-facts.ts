/**
 * Writes a batch of events as fact rows: one INSERT per table (job events first, so the rollups
 * of a job's events are never ahead of its start).
 *
 * The rollups are materialised views: they aggregate every row inserted, so what must not be
 * counted twice must never be inserted twice. Two checks keep it out:
 *   * positions (`skipStored`, the live projector and a replay's retried insert): a redelivered
 *     message, or a retried insert whose first try landed after all, is left out;
 *   * event ids, for page facts (the only table with sums: bytes, fetch time, retries): the same
 *     event at a new position — a worker that fetched a page again after a crash re-emits its
 *     deterministic event id — is left out when its first copy is stored within `dedupeWindow`
 *     offsets of the same partition, or earlier in the batch. Counts are uniqExact(event_id)
 *     states, so item and job-event counts are exact without this check.
 */
import type { ClickHouse } from '../clickhouse/http-client.ts';
import { FACT_COLUMNS, FACT_TABLES, type FactTable, type PositionedEvent } from '../model/fact-rows.ts';
import { tableOf, tsvBatch, type UserMemory } from '../model/tsv-batch.ts';
import { positionKey, storedCopies, storedPositions } from './positions.ts';

/** Offsets of a partition within which a page event written again is recognised (~13 min of a 130 pages/s crawl on one partition). */
export const DEDUPE_WINDOW = 100_000n;

export interface WriteOptions {
  /** Leave out the positions already stored. */
  readonly skipStored: boolean;
  readonly dedupeWindow?: bigint;
}

export interface WriteResult {
  readonly inserted: number;
  /** Already stored at their position, or not analytics events. */
  readonly skipped: number;
  /** Page events whose event id was stored (or came earlier in the batch) at another position. */
  readonly duplicates: number;
}

export async function writeFacts(ch: ClickHouse, events: readonly PositionedEvent[], users: UserMemory, options: WriteOptions): Promise<WriteResult> {
  // Job events teach the users of their jobs even when they are not written again.
  users.learn(events);
  const byTable = new Map<FactTable, PositionedEvent[]>();
  for (const e of events) {
    const table = tableOf(e.name);
    if (!table) continue;
    let list = byTable.get(table);
    if (!list) byTable.set(table, (list = []));
    list.push(e);
  }
  const fresh: PositionedEvent[] = [];
  let duplicates = 0;
  for (const [table, list] of byTable) {
    let keep = list;
    if (table === 'page_fetches') {
      // One read answers both checks: positions stored, and event ids stored in the window.
      const stored = await storedCopies(ch, table, list, options.dedupeWindow ?? DEDUPE_WINDOW);
      if (options.skipStored) keep = keep.filter((e) => !stored.positions.has(positionKey(e.partition, e.offset)));
      const first = firstCopies(keep, (id) => stored.ids.has(id));
      duplicates += keep.length - first.length;
      keep = first;
    } else if (options.skipStored) {
      const stored = await storedPositions(ch, table, keep);
      keep = keep.filter((e) => !stored.has(positionKey(e.partition, e.offset)));
    }
    for (const e of keep) fresh.push(e); // not push(...keep): a large batch would outgrow the call stack
  }
  const batch = tsvBatch(fresh, users);
  let inserted = 0;
  for (const table of FACT_TABLES) {
    if (batch.rows[table] === 0) continue;
    await ch.insertTsv(table, FACT_COLUMNS[table], batch.bodies[table]);
    inserted += batch.rows[table];
  }
  return { inserted, skipped: events.length - inserted - duplicates, duplicates };
}

const eventId = (e: PositionedEvent): string => (e.value as { event_id: string }).event_id;

/** The events whose id is neither stored nor earlier in the list. */
export function firstCopies(events: readonly PositionedEvent[], stored: (id: string) => boolean): PositionedEvent[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    const id = eventId(e);
    if (seen.has(id) || stored(id)) return false;
    seen.add(id);
    return true;
  });
}
