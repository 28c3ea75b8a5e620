/**
 * Safe SQL text for ClickHouse 18.16, which has no query parameters: every value that reaches a
 * statement goes through these, and rows travel as TabSeparated with its own escaping. Values a
 * user can influence are validated first (hostnames, UUIDs, bounded integers) and then rendered
 * here: validation keeps nonsense out, quoting keeps whatever slips through a literal.
 */

const LITERAL_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u0000': '\\0' };
const TSV_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\u0000': '\\0' };

/** A string literal: backslash, quote and control characters escaped. */
export function quote(s: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is matched on purpose: it must be escaped
  return `'${s.replace(/[\\'\n\r\t\u0000]/g, (c) => LITERAL_ESCAPES[c]!)}'`;
}

/** An identifier in backquotes (database and table names come from code and checked options). */
export function ident(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** A non-negative integer literal (offsets, partitions, bounds), refusing anything else: NaN, floats, exponents, negatives, unsafe numbers. */
export function uint(n: number | bigint): string {
  const ok = typeof n === 'bigint' ? n >= 0n : Number.isSafeInteger(n) && n >= 0;
  if (!ok) throw new TypeError(`not a non-negative integer: ${String(n)}`);
  return String(n);
}

/** A TabSeparated field: backslash, tab, newline, carriage return and NUL escaped. */
export function tsvField(s: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is matched on purpose: it must be escaped
  return /[\\\t\n\r\u0000]/.test(s) ? s.replace(/[\\\t\n\r\u0000]/g, (c) => TSV_ESCAPES[c]!) : s;
}

/** DateTime as Unix seconds, which TabSeparated input reads whatever the server's time zone. */
export function tsvDateTime(d: Date): string {
  return String(Math.max(0, Math.floor(d.getTime() / 1000)));
}

const SAFE_DATABASE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Database names are made by code (`trawl`, `trawl_r<id>`) but may come from CLICKHOUSE_DATABASE or tests: checked, since they go in URLs and DDL. */
export function checkDatabaseName(name: string): string {
  if (!SAFE_DATABASE.test(name)) throw new TypeError(`ClickHouse database name must match ${SAFE_DATABASE}, got "${name}"`);
  return name;
}
