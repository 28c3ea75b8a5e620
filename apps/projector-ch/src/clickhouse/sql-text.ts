/**
 * Safe SQL text for ClickHouse 18.16, which has no query parameters: every value that reaches a
 * statement goes through these, and rows travel as TabSeparated with its own escaping.
 */

/** A string literal: backslash and quote escaped, control characters as escapes. */
export function quote(s: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is matched on purpose: it must be escaped or dropped
  return `'${s.replace(/[\\'\n\r\t\u0000]/g, (c) => ({ '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u0000': '\\0' })[c]!)}'`;
}

/** An identifier in backquotes (database and table names come from code and checked options). */
export function ident(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** A non-negative integer literal (offsets, partitions), refusing anything else. */
export function uint(n: number | bigint): string {
  const s = String(n);
  if (!/^\d+$/.test(s)) throw new Error(`not an unsigned integer: ${s}`);
  return s;
}

/** A TabSeparated field: backslash, tab, newline, carriage return and NUL escaped. */
export function tsvField(s: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is matched on purpose: it must be escaped or dropped
  return /[\\\t\n\r\u0000]/.test(s) ? s.replace(/[\\\t\n\r\u0000]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\u0000': '\\0' })[c]!) : s;
}

/** DateTime as Unix seconds, which TabSeparated input reads whatever the server's time zone. */
export function tsvDateTime(d: Date): string {
  return String(Math.max(0, Math.floor(d.getTime() / 1000)));
}

const SAFE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Database names are made by code (`trawl`, `trawl_r<id>`), but may come from CLICKHOUSE_DATABASE: check them. */
export function checkDatabaseName(name: string): string {
  if (!SAFE_NAME.test(name)) throw new Error(`ClickHouse database name must match ${SAFE_NAME}, got "${name}"`);
  return name;
}
