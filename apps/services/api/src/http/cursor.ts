/**
 * Opaque keyset cursors: base64url of `[timestamp, id]`. The timestamp is Postgres's own text with
 * microseconds (see `sortAt`), never a JS Date: a Date keeps milliseconds only, and a cursor cut to
 * milliseconds would return rows of the same millisecond again, for ever. A cursor that does not
 * decode is a client error (400), never a 500.
 */
import { ApiError } from '../errors.ts';

export interface Cursor {
  /** ISO-8601 UTC with microseconds, as produced by `sortAt`. */
  readonly at: string;
  readonly id: string;
}

/** SQL giving a timestamptz expression as the exact text a cursor carries. */
export function sortAt(expr: string): string {
  return `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id]), 'utf8').toString('base64url');
}

export function decodeCursor(raw: string | undefined): Cursor | undefined {
  if (raw === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && AT.test(value[0]) && typeof value[1] === 'string') {
      return { at: value[0], id: value[1] };
    }
  } catch {
    // fall through
  }
  throw new ApiError('VALIDATION_FAILED', 'cursor is not one this API issued', { field: 'cursor' });
}
