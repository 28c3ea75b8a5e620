/**
 * Writes a batch of events as fact rows: one INSERT per table (job events first, so the rollups
 * of a job's events are never ahead of its start). With `skipStored` (the live projector), the
 * positions already in the tables are left out first: a redelivered message, or a retried insert
 * whose first try landed after all, is never inserted twice, so the rollups' materialised views
 * never see it twice either.
 */
import type { ClickHouse } from '../clickhouse/http-client.ts';
import { FACT_COLUMNS, FACT_TABLES, type FactTable, type PositionedEvent } from '../model/fact-rows.ts';
import { tableOf, tsvBatch, type UserMemory } from '../model/tsv-batch.ts';
import { positionKey, storedPositions } from './positions.ts';

export interface WriteResult {
  readonly inserted: number;
  readonly skipped: number;
}

export async function writeFacts(ch: ClickHouse, events: readonly PositionedEvent[], users: UserMemory, { skipStored }: { skipStored: boolean }): Promise<WriteResult> {
  let fresh = events;
  if (skipStored) {
    users.learn(events);
    const byTable = new Map<FactTable, PositionedEvent[]>();
    for (const e of events) {
      const table = tableOf(e.name);
      if (!table) continue;
      let list = byTable.get(table);
      if (!list) byTable.set(table, (list = []));
      list.push(e);
    }
    const keep: PositionedEvent[] = [];
    for (const [table, list] of byTable) {
      const stored = await storedPositions(ch, table, list);
      for (const e of list) if (!stored.has(positionKey(e.partition, e.offset))) keep.push(e);
    }
    fresh = keep;
  }
  const batch = tsvBatch(fresh, users);
  let inserted = 0;
  for (const table of FACT_TABLES) {
    if (batch.rows[table] === 0) continue;
    await ch.insertTsv(table, FACT_COLUMNS[table], batch.bodies[table]);
    inserted += batch.rows[table];
  }
  return { inserted, skipped: events.length - fresh.length };
}
