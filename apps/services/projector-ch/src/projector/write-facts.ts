/**
 * Writes a batch of events as fact rows: one INSERT per table (job events first, so the rollups
 * of a job's events are never ahead of its start).
 *
 * The rollups are materialised views: they aggregate every row inserted, so what must not be
 * counted twice must never be inserted twice. One read per table (storedCopies) answers two checks:
 *   * positions (`skipStored`, the live projector and a replay's retried insert): a redelivered
 *     message, or a retried insert whose first try landed after all, is left out;
 *   * event identity (event-identity.ts), for every table: the same event at a new position — a
 *     worker that fetched a page again after a crash re-emits its deterministic event id — is left
 *     out when a copy is stored within `dedupeWindow` offsets before it in the same partition, or
 *     comes earlier in the batch.
 */
import type { ClickHouse } from '@trawl/clickhouse';
import { FACT_COLUMNS, FACT_TABLES, type FactTable, type PositionedEvent } from '../model/fact-rows.ts';
import { tableOf, tsvBatch, type UserMemory } from '../model/tsv-batch.ts';
import { DEDUPE_WINDOW, firstCopies } from '../model/event-identity.ts';
import { positionKey, storedCopies } from './positions.ts';

export interface WriteOptions {
  /** Leave out the positions already stored. */
  readonly skipStored: boolean;
  /** Default DEDUPE_WINDOW; tests shrink it to reach its edge. */
  readonly dedupeWindow?: bigint;
}

export interface WriteResult {
  readonly inserted: number;
  /** Already stored at their position, or not analytics events. */
  readonly skipped: number;
  /** Copies of events stored (or earlier in the batch) at another position, left out (event-identity.ts). */
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
    const stored = await storedCopies(ch, table, list, options.dedupeWindow ?? DEDUPE_WINDOW);
    const unstored = options.skipStored ? list.filter((e) => !stored.positions.has(positionKey(e.partition, e.offset))) : list;
    const first = firstCopies(unstored, stored.keptAt, options.dedupeWindow ?? DEDUPE_WINDOW);
    duplicates += unstored.length - first.length;
    for (const e of first) fresh.push(e); // not push(...first): a large batch would outgrow the call stack
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
