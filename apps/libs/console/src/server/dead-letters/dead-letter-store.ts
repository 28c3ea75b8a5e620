/**
 * Reads of projector-pg's `dead_letters` read model, always scoped to one user: keyset pages,
 * newest first on `(failed_at, id)`, each an index range scan of `(user_id, [source | job_id,]
 * failed_at DESC, id DESC)` — the cost of a page is its size, whatever the user or the topics
 * hold. No topic is ever read.
 */
import type { Pool } from '@trawl/store';
import { ConsoleError } from '../errors.ts';
import { toDeadLetter, type DeadLetter, type DeadLetterRecord, type DeadLetterSource } from './dead-letter-entry.ts';

/** The listing's columns: everything but the value and headers, which only a re-drive needs. */
const LIST_COLUMNS = `id, source, topic, partition, "offset"::text AS "offset", job_id, event, url, reason, error_class, error_code,
  error_message, attempts, failed_at, origin_topic, origin_partition, origin_offset::text AS origin_offset, key`;

export interface DeadLetterPosition {
  readonly failedAt: string;
  readonly id: string;
}

export interface DeadLetterQuery {
  readonly userId: string;
  readonly source?: DeadLetterSource;
  readonly jobId?: string;
  readonly limit: number;
  /** The last entry of the previous page. */
  readonly after?: DeadLetterPosition;
}

/** Opaque cursor: base64url of `[failed_at ISO, id]`. */
export function encodeCursor(p: DeadLetterPosition): string {
  return Buffer.from(JSON.stringify([p.failedAt, p.id])).toString('base64url');
}

export function decodeCursor(cursor: string): DeadLetterPosition {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string' && !Number.isNaN(Date.parse(parsed[0]))) {
      return { failedAt: parsed[0], id: parsed[1] };
    }
  } catch {
    // answered below
  }
  throw new ConsoleError('VALIDATION_FAILED', 'cursor is not one this API gave out', 'cursor');
}

/** projector-pg has not set up the table yet: nothing can be answered. */
function notThere(err: unknown): never {
  if ((err as { code?: string }).code === '42P01') {
    throw new ConsoleError('DEPENDENCY_UNAVAILABLE', 'dead letters are not projected yet (is projector-pg running?); retry later', undefined, { cause: err });
  }
  throw err;
}

/** One page of the user's dead letters, newest first, and the position after it (when there is more). */
export async function listDeadLetters(db: Pool, q: DeadLetterQuery): Promise<{ letters: DeadLetter[]; next?: DeadLetterPosition }> {
  const where = ['user_id = $1'];
  const args: unknown[] = [q.userId];
  const arg = (v: unknown) => `$${args.push(v)}`;
  if (q.source) where.push(`source = ${arg(q.source)}`);
  if (q.jobId) where.push(`job_id = ${arg(q.jobId)}`);
  if (q.after) where.push(`(failed_at, id) < (${arg(q.after.failedAt)}::timestamptz, ${arg(q.after.id)})`);
  const { rows } = await db
    .query<DeadLetterRecord>(`SELECT ${LIST_COLUMNS} FROM dead_letters WHERE ${where.join(' AND ')} ORDER BY failed_at DESC, id DESC LIMIT ${arg(q.limit + 1)}`, args)
    .catch(notThere);
  const letters = rows.slice(0, q.limit).map(toDeadLetter);
  const last = letters[letters.length - 1];
  return rows.length > q.limit && last ? { letters, next: { failedAt: last.view.failed_at!, id: last.view.id } } : { letters };
}

/** The user's dead letter with its bytes, for a re-drive; undefined when unknown or another user's. */
export async function findDeadLetter(db: Pool, id: string, userId: string): Promise<DeadLetter | undefined> {
  const { rows } = await db
    .query<DeadLetterRecord>(`SELECT ${LIST_COLUMNS}, value, headers FROM dead_letters WHERE id = $1 AND user_id = $2`, [id, userId])
    .catch(notThere);
  return rows[0] ? toDeadLetter(rows[0]) : undefined;
}
