/**
 * Multi-row writes as one statement per table: each column travels as one array parameter and
 * `unnest` turns them back into rows. One round trip per table per batch, a fixed number of
 * parameters however many rows (no 65,535-parameter ceiling), and pg escapes array elements.
 */
import type pg from 'pg';
import { ident } from './tables.ts';

export type ColumnType = 'text' | 'int' | 'bigint' | 'bool' | 'timestamptz' | 'jsonb';

export interface Column<R> {
  readonly name: string;
  readonly type: ColumnType;
  readonly get: (row: R) => unknown;
}

/** Postgres refuses NUL in text and jsonb; crawled text may hold one. */
function clean(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

/**
 * A value as jsonb input. JSON.stringify writes a NUL inside a string as the escape `\u0000`, which
 * jsonb refuses ("unsupported Unicode escape sequence") — one crawled item field holding a NUL
 * would fail its batch forever. Such values are written again with the NULs left out.
 */
export function jsonbText(v: unknown): string {
  const text = JSON.stringify(v);
  if (!text.includes('\\u0000')) return text;
  return JSON.stringify(v, (_key, x: unknown) => (typeof x === 'string' ? clean(x) : x));
}

function encode(type: ColumnType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'text':
      return clean(String(v));
    case 'jsonb':
      return jsonbText(v);
    case 'timestamptz':
      return (v as Date).toISOString();
    default:
      return v;
  }
}

/** jsonb arrays travel as text[] and are cast per element (pg would send JS arrays as Postgres arrays). */
function arrayType(type: ColumnType): string {
  return type === 'jsonb' ? 'text[]' : `${type}[]`;
}

export interface UpsertOptions {
  /** Conflict target; without it the statement is a plain INSERT. */
  readonly key?: readonly string[];
  /** ON CONFLICT DO UPDATE only where this SQL (over the table and EXCLUDED) holds. */
  readonly updateWhere?: string;
}

/** A client or a pool: anything that runs one statement. */
export type Queryable = Pick<pg.ClientBase, 'query'> | Pick<pg.Pool, 'query'>;

export async function bulkUpsert<R>(client: Queryable, table: string, columns: readonly Column<R>[], rows: readonly R[], options: UpsertOptions = {}): Promise<number> {
  if (rows.length === 0) return 0;
  const names = columns.map((c) => ident(c.name));
  const params = columns.map((c) => rows.map((r) => encode(c.type, c.get(r))));
  const unnest = columns.map((c, i) => `$${i + 1}::${arrayType(c.type)}`).join(', ');
  const select = columns.map((c, i) => (c.type === 'jsonb' ? `u.${names[i]}::jsonb` : `u.${names[i]}`)).join(', ');
  let sql = `INSERT INTO ${ident(table)} (${names.join(', ')}) SELECT ${select} FROM unnest(${unnest}) AS u(${names.join(', ')})`;
  if (options.key) {
    const key = new Set(options.key);
    const sets = columns.filter((c) => !key.has(c.name)).map((c) => `${ident(c.name)} = EXCLUDED.${ident(c.name)}`);
    sql += ` ON CONFLICT (${options.key.map(ident).join(', ')}) DO UPDATE SET ${sets.join(', ')}`;
    if (options.updateWhere) sql += ` WHERE ${options.updateWhere}`;
  }
  const res = await (client as Pick<pg.ClientBase, 'query'>).query(sql, params);
  return res.rowCount ?? 0;
}
