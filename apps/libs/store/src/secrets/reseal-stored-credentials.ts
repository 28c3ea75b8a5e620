/**
 * Credentials kept in configuration rows — a website's `headers`, `cookies` and `reach` (proxies,
 * login, actions), a schedule's stored `request`, a crawl's stored `request` (`api_jobs`) — brought
 * to the current key: a clear value (written before credentials were sealed) is sealed, one sealed
 * under an old key (TRAWL_SECRETS_OLD_KEYS) is sealed again under TRAWL_SECRETS_KEY; `{secret}`
 * references stay names. Run by the API at start, after the migrations, as the webhook and user
 * secrets are; rows go in batches under an advisory lock, so replicas starting together do the
 * work once. A value sealed under a key that is not configured is left as it is (its jobs fail
 * their pages naming the field) and counted.
 *
 * What Kafka already holds (JobDispatched and FetchRequested of jobs submitted before sealing)
 * cannot be rewritten: it leaves with the topics' retention.
 */
import type { Pool, PoolClient } from '../pool.ts';
import { CREDENTIAL_CONTEXT, mapCredentials } from './seal-credentials.ts';
import { isSealed, sealedKeyId, type SecretBox } from './secret-box.ts';

/** Where credentials are kept: a table, its key column, its JSON columns (each holding options, or options in its root). */
interface Kept {
  readonly table: string;
  readonly key: string;
  readonly columns: readonly string[];
  /** Rows that may hold a credential (the rest are not read). */
  readonly where: string;
}

const KEPT: readonly Kept[] = [
  { table: 'websites', key: 'id', columns: ['headers', 'cookies', 'reach'], where: "(headers <> '{}' OR cookies <> '{}' OR reach ?| array['proxies', 'login', 'actions'])" },
  { table: 'schedules', key: 'id', columns: ['request'], where: "request ?| array['headers', 'cookies', 'proxies', 'login', 'actions']" },
  { table: 'api_jobs', key: 'job_id', columns: ['request'], where: "request ?| array['headers', 'cookies', 'proxies', 'login', 'actions']" },
];

export interface StoredCredentialsReport {
  /** Rows rewritten (a clear value sealed or an old key's value resealed). */
  readonly rows: number;
  /** Values sealed under a key that is not configured, left as they are. */
  readonly unreadable: number;
}

/** Every credential of `value` at the current key; `changed` says whether any moved. */
function resealed(value: unknown, column: string, box: SecretBox, counts: { unreadable: number }): { value: unknown; changed: boolean } {
  if (value === null || typeof value !== 'object') return { value, changed: false };
  let changed = false;
  // A column holding one kind of options (`headers`, `cookies`) is wrapped so the walker finds it.
  const wrapped = column === 'headers' || column === 'cookies' ? { [column]: value } : value;
  const out = mapCredentials(wrapped as object, (v) => {
    if (typeof v !== 'string') return v;
    if (!isSealed(v)) {
      changed = true;
      return box.seal(v, CREDENTIAL_CONTEXT);
    }
    if (box.isCurrent(v)) return v;
    if (!box.opens(sealedKeyId(v)!)) {
      counts.unreadable++;
      return v;
    }
    changed = true;
    return box.seal(box.open(v, CREDENTIAL_CONTEXT), CREDENTIAL_CONTEXT);
  });
  return { value: column === 'headers' || column === 'cookies' ? (out as Record<string, unknown>)[column] : out, changed };
}

async function tableExists(db: Pool | PoolClient, table: string): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [table]);
  return rows[0]!.ok;
}

export async function resealStoredCredentials(pool: Pool, box: SecretBox): Promise<StoredCredentialsReport> {
  let rows = 0;
  const counts = { unreadable: 0 };
  for (const kept of KEPT) {
    if (!(await tableExists(pool, kept.table))) continue;
    let after: string | null = null;
    for (;;) {
      const client = await pool.connect();
      let last: string | null = null;
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`trawl-secrets:${kept.table}`]);
        const cols = kept.columns.map((c) => `"${c}"`).join(', ');
        const result = await client.query<Record<string, unknown>>(
          `SELECT "${kept.key}" AS key, ${cols} FROM "${kept.table}" WHERE ($1::text IS NULL OR "${kept.key}" > $1) AND ${kept.where} ORDER BY "${kept.key}" LIMIT 500 FOR UPDATE`,
          [after],
        );
        const batch: Record<string, unknown>[] = result.rows;
        for (const row of batch) {
          const updates: [string, unknown][] = [];
          for (const c of kept.columns) {
            const r = resealed(row[c], c, box, counts);
            if (r.changed) updates.push([c, r.value]);
          }
          if (updates.length > 0) {
            const set = updates.map(([c], i) => `"${c}" = $${i + 2}`).join(', ');
            await client.query(`UPDATE "${kept.table}" SET ${set} WHERE "${kept.key}" = $1`, [row.key, ...updates.map(([, v]) => JSON.stringify(v))]);
            rows++;
          }
        }
        await client.query('COMMIT');
        last = batch.length === 500 ? String(batch[batch.length - 1]!.key) : null;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
      if (last === null) break;
      after = last;
    }
  }
  return { rows, unreadable: counts.unreadable };
}
