/**
 * Kafka positions kept in the facts themselves. A fact row's (_partition, _offset) is written by
 * the same INSERT as the row, so "is this message stored?" has an exact answer at any moment —
 * after a crash, a retried insert whose first try did land, a rebalance — with no offsets table
 * that could disagree with the data.
 */
import { type ClickHouse, ident, tsvField, uint } from '@trawl/clickhouse';
import type { FactTable, PositionedEvent } from '../model/fact-rows.ts';
import { eventIdOf, type KeptAt } from '../model/event-identity.ts';

export const positionKey = (partition: number, offset: bigint): string => `${partition}:${offset}`;

/** The WHERE clause of a primary-key range read: per partition, from `before` offsets under the lowest given to the highest. */
function rangesWhere(events: readonly Pick<PositionedEvent, 'partition' | 'offset'>[], before = 0n): string {
  const ranges = new Map<number, { lo: bigint; hi: bigint }>();
  for (const e of events) {
    const r = ranges.get(e.partition);
    if (!r) ranges.set(e.partition, { lo: e.offset, hi: e.offset });
    else {
      if (e.offset < r.lo) r.lo = e.offset;
      if (e.offset > r.hi) r.hi = e.offset;
    }
  }
  return [...ranges].map(([p, r]) => `(_partition = ${uint(p)} AND _offset BETWEEN ${uint(r.lo > before ? r.lo - before : 0n)} AND ${uint(r.hi)})`).join(' OR ');
}

/** Of the given positions of one table, those already stored (a primary-key range read per partition). */
export async function storedPositions(ch: ClickHouse, table: FactTable, events: readonly Pick<PositionedEvent, 'partition' | 'offset'>[], database: string = ch.database): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const rows = await ch.rows<{ p: number; o: string }>(`SELECT _partition AS p, toString(_offset) AS o FROM ${ident(database)}.${ident(table)} WHERE ${rangesWhere(events)}`);
  return new Set(rows.map((r) => positionKey(Number(r.p), BigInt(r.o))));
}

export interface StoredCopies {
  /** Positions of the given events already stored (a redelivery, or a retried insert that landed). */
  readonly positions: Set<string>;
  /** Where each of the given events' ids is stored in the window: its highest offset per partition (event-identity.ts). */
  readonly keptAt: KeptAt;
}

/**
 * What is stored of the given events of one table, by position and by event id, in one read: rows
 * of the same partitions from `window` offsets before the earliest of them up to the latest,
 * filtered by the events' ids (sent as external data: a flush's tens of thousands of ids parsed
 * as an IN list cost ClickHouse more than the read). The ids also recognise an event written again at a new position (a
 * worker that fetched a page again after a crash re-emits its deterministic event id).
 */
export async function storedCopies(
  ch: ClickHouse,
  table: FactTable,
  events: readonly Pick<PositionedEvent, 'partition' | 'offset' | 'value'>[],
  window: bigint,
  database: string = ch.database,
): Promise<StoredCopies> {
  if (events.length === 0) return { positions: new Set(), keptAt: () => undefined };
  const ids = new Set(events.map(eventIdOf));
  // The ids travel as external data, not as an IN list to parse (see ClickHouse.rows).
  const sql = `SELECT event_id AS id, _partition AS p, toString(_offset) AS o FROM ${ident(database)}.${ident(table)} WHERE (${rangesWhere(events, window)}) AND event_id IN batch_ids`;
  const rows = await ch.rows<{ id: string; p: number; o: string }>(sql, { external: { name: 'batch_ids', structure: 'id String', tsv: [...ids].map((id) => `${tsvField(id)}\n`).join('') } });
  if (rows.length === 0) return { positions: new Set(), keptAt: () => undefined };
  const highest = new Map<number, Map<string, bigint>>();
  for (const r of rows) {
    const p = Number(r.p);
    const o = BigInt(r.o);
    let ids = highest.get(p);
    if (!ids) highest.set(p, (ids = new Map()));
    if ((ids.get(r.id) ?? -1n) < o) ids.set(r.id, o);
  }
  return { positions: new Set(rows.map((r) => positionKey(Number(r.p), BigInt(r.o)))), keptAt: (p, id) => highest.get(p)?.get(id) };
}

/** The next position per partition of one table: max(_offset) + 1 (where the projection stands). */
export async function nextPositions(ch: ClickHouse, table: FactTable, database: string = ch.database): Promise<Map<number, bigint>> {
  const rows = await ch.rows<{ p: number; o: string }>(`SELECT _partition AS p, toString(max(_offset) + 1) AS o FROM ${ident(database)}.${ident(table)} GROUP BY _partition`);
  return new Map(rows.map((r) => [Number(r.p), BigInt(r.o)]));
}
