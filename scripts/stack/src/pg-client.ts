/** One-statement Postgres access for the stack: a fresh connection per call, closed afterwards. */
import pg from 'pg';
import { errorMessage } from './errors.ts';

/** Runs one statement on a fresh connection. Errors carry Postgres's message. */
export async function query(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `undefined` when the server answers `SELECT 1` on that URL, else why not. */
export async function unreachable(url: string): Promise<string | undefined> {
  try {
    await query(url, 'SELECT 1');
    return undefined;
  } catch (err) {
    return errorMessage(err) || String((err as { code?: string }).code ?? err);
  }
}
