/**
 * Appends rows with COPY FROM STDIN (text format): the cheapest way into Postgres, used where no
 * conflict handling is needed — the replay's unindexed stage tables, and the live projector's rows
 * seen for the first time (apply-batch.ts). Values are escaped for the
 * COPY text format (backslash, tab, newline, carriage return; NULL as \N); NUL, which Postgres
 * refuses in text, is dropped as bulkUpsert does.
 */
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { jsonbText, type Column } from './bulk-upsert.ts';
import { ident } from './tables.ts';

// eslint-disable-next-line no-control-regex -- NUL is matched on purpose: it must be escaped or dropped
const SPECIAL = /[\\\t\n\r\u0000]/;

export function copyText(s: string): string {
  if (!SPECIAL.test(s)) return s;
  // eslint-disable-next-line no-control-regex -- NUL is matched on purpose: it must be escaped or dropped
  return s.replace(/[\\\t\n\r\u0000]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : ''));
}

function field(type: Column<unknown>['type'], v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  switch (type) {
    case 'text':
      return copyText(String(v));
    case 'jsonb':
      return copyText(jsonbText(v));
    case 'timestamptz':
      return (v as Date).toISOString();
    case 'bool':
      return v ? 't' : 'f';
    default:
      return String(v);
  }
}

const CHUNK_ROWS = 2000;

/** Serialises rows to COPY text in chunks, so a large batch never becomes one giant string. */
function* chunks<R>(columns: readonly Column<R>[], rows: readonly R[], perChunk = CHUNK_ROWS): Generator<string> {
  for (let i = 0; i < rows.length; i += perChunk) {
    let out = '';
    for (const r of rows.slice(i, i + perChunk)) {
      let line = '';
      for (let c = 0; c < columns.length; c++) {
        const col = columns[c]!;
        line += (c === 0 ? '' : '\t') + field(col.type as Column<unknown>['type'], col.get(r));
      }
      out += `${line}\n`;
    }
    yield out;
  }
}

export async function copyRows<R>(client: pg.ClientBase, table: string, columns: readonly Column<R>[], rows: readonly R[]): Promise<void> {
  if (rows.length === 0) return;
  const sql = `COPY ${ident(table)} (${columns.map((c) => ident(c.name)).join(', ')}) FROM STDIN`;
  const stream = client.query(copyFrom(sql));
  if (rows.length > CHUNK_ROWS) return pipeline(Readable.from(chunks(columns, rows)), stream);
  // A live batch's rows: one write, without a Readable and a pipeline per statement.
  const [body] = chunks(columns, rows);
  await new Promise<void>((resolve, reject) => {
    stream.once('error', reject);
    stream.once('finish', resolve);
    stream.end(body);
  });
}
