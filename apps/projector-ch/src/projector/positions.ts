/**
 * Kafka positions kept in the facts themselves. A fact row's (_partition, _offset) is written by
 * the same INSERT as the row, so "is this message stored?" has an exact answer at any moment —
 * after a crash, a retried insert whose first try did land, a rebalance — with no offsets table
 * that could disagree with the data.
 */
import type { ClickHouse } from '../clickhouse/http-client.ts';
import { ident, uint } from '../clickhouse/sql-text.ts';
import type { FactTable, PositionedEvent } from '../model/fact-rows.ts';

export const positionKey = (partition: number, offset: bigint): string => `${partition}:${offset}`;

/** Of the given positions of one table, those already stored (a primary-key range read per partition). */
export async function storedPositions(ch: ClickHouse, table: FactTable, events: readonly Pick<PositionedEvent, 'partition' | 'offset'>[], database: string = ch.database): Promise<Set<string>> {
  const ranges = new Map<number, { lo: bigint; hi: bigint }>();
  for (const e of events) {
    const r = ranges.get(e.partition);
    if (!r) ranges.set(e.partition, { lo: e.offset, hi: e.offset });
    else {
      if (e.offset < r.lo) r.lo = e.offset;
      if (e.offset > r.hi) r.hi = e.offset;
    }
  }
  if (ranges.size === 0) return new Set();
  const where = [...ranges].map(([p, r]) => `(_partition = ${uint(p)} AND _offset BETWEEN ${uint(r.lo)} AND ${uint(r.hi)})`).join(' OR ');
  const rows = await ch.rows<{ p: number; o: string }>(`SELECT _partition AS p, toString(_offset) AS o FROM ${ident(database)}.${ident(table)} WHERE ${where}`);
  return new Set(rows.map((r) => positionKey(Number(r.p), BigInt(r.o))));
}

/** The next position per partition of one table: max(_offset) + 1 (where the projection stands). */
export async function nextPositions(ch: ClickHouse, table: FactTable, database: string = ch.database): Promise<Map<number, bigint>> {
  const rows = await ch.rows<{ p: number; o: string }>(`SELECT _partition AS p, toString(max(_offset) + 1) AS o FROM ${ident(database)}.${ident(table)} GROUP BY _partition`);
  return new Map(rows.map((r) => [Number(r.p), BigInt(r.o)]));
}
