/**
 * Values in ClickHouse SQL text. 18.16 has no query parameters, so every value a user can
 * influence is validated first (hostnames, UUIDs, bounded integers) and then rendered by these:
 * validation keeps nonsense out, quoting keeps whatever slips through a literal.
 */

const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u0000': '\\0' };

/** A string literal: backslash, quote and control characters escaped. */
export function quote(s: string): string {
  // NUL is one of the characters to escape: the control character in the pattern is the point.
  // eslint-disable-next-line no-control-regex
  return `'${s.replace(/[\\'\n\r\t\u0000]/g, (c) => ESCAPES[c]!)}'`;
}

/** A non-negative integer literal, refusing anything else (NaN, floats, exponents, negatives). */
export function uint(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`not a non-negative safe integer: ${n}`);
  return String(n);
}

const SAFE_DATABASE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Database names come from CLICKHOUSE_DATABASE or tests: checked, since they go in URLs and DDL. */
export function checkDatabaseName(name: string): string {
  if (!SAFE_DATABASE.test(name)) throw new TypeError(`ClickHouse database name must match ${SAFE_DATABASE}, got "${name}"`);
  return name;
}
