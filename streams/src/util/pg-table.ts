import type pg from 'pg';

/** What a statement needs: a pool, a client, a transaction's client. */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/** Runs a `CREATE TABLE IF NOT EXISTS …`; safe when several processes start together. */
export async function createTableIfMissing(db: Queryable, createSql: string): Promise<void> {
  try {
    await db.query(createSql);
  } catch (err) {
    // Two concurrent CREATE TABLE IF NOT EXISTS can both pass the check; the loser hits the
    // catalogue's unique index. The table exists either way.
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P07') throw err;
  }
}
