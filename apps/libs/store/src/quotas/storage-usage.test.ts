/**
 * Storage usage against a real Postgres, over tables of the read model's shape (the columns it
 * reads of projector-pg's `jobs` and `job_pages`, and the API's `job_content_deletions`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { CONFIG_MIGRATIONS } from '../config/migrations.ts';
import { migrate } from '../migrate.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { recordJobs } from './quota-ledger.ts';
import { inTransaction } from '../pool.ts';
import { DEFAULT_QUOTAS, quotaLimitsOf, setUserQuotas } from './quota-limits.ts';
import { jobOwner, readStorageUsage, SETTLE_AFTER_MS } from './storage-usage.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('trawl_storage');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await db.pool.query(`
    CREATE TABLE jobs (job_id text PRIMARY KEY, user_id text, finished_at timestamptz);
    CREATE TABLE job_pages (job_id text, fetch_id text, bytes bigint NOT NULL DEFAULT 0, content_hash text, formats jsonb NOT NULL DEFAULT '[]', downloads jsonb NOT NULL DEFAULT '[]', from_cache text, PRIMARY KEY (job_id, fetch_id));
    CREATE TABLE job_content_deletions (job_id text PRIMARY KEY);
  `);
});
afterAll(async () => {
  await db?.drop();
});

const hash = (c: string) => c.repeat(64);
async function page(jobId: string, p: { bytes: number; content_hash?: string | null; formats?: { format: string; hash: string; bytes: number }[]; from_cache?: string | null }): Promise<void> {
  await db.pool.query('INSERT INTO job_pages (job_id, fetch_id, bytes, content_hash, formats, from_cache) VALUES ($1, $2, $3, $4, $5, $6)', [
    jobId, randomUUID(), p.bytes, p.content_hash ?? null, JSON.stringify(p.formats ?? []), p.from_cache ?? null,
  ]);
}

describe('storage usage', () => {
  it("counts each page's body and formats once, not a body reused from the cache nor a page without content", async () => {
    const user = `u-${randomUUID()}`;
    const job = randomUUID();
    await db.pool.query('INSERT INTO jobs VALUES ($1, $2, NULL)', [job, user]);
    // Body 1000 bytes kept as html (counted once) + markdown 300.
    await page(job, { bytes: 1200, content_hash: hash('a'), formats: [{ format: 'html', hash: hash('a'), bytes: 1000 }, { format: 'markdown', hash: hash('b'), bytes: 300 }] });
    // A body kept for the HTTP cache only: the page's bytes.
    await page(job, { bytes: 500, content_hash: hash('c') });
    // A 304: the body is another job's; its markdown is kept now.
    await page(job, { bytes: 0, content_hash: hash('d'), from_cache: 'not_modified', formats: [{ format: 'markdown', hash: hash('e'), bytes: 40 }] });
    // Nothing kept (no formats asked, or refused).
    await page(job, { bytes: 9000 });
    expect((await readStorageUsage(db.pool, [user, 'nobody'])).get(user)).toBe(1000 + 300 + 500 + 40);
    expect((await readStorageUsage(db.pool, ['nobody'])).get('nobody')).toBe(0);
  });

  it('settles a job long over once, and a deleted job frees what it counted', async () => {
    const user = `u-${randomUUID()}`;
    const [old, recent] = [randomUUID(), randomUUID()];
    await db.pool.query("INSERT INTO jobs VALUES ($1, $3, now() - interval '1 hour'), ($2, $3, now())", [old, recent, user]);
    await page(old, { bytes: 700, content_hash: hash('f') });
    await page(recent, { bytes: 50, content_hash: hash('g') });
    expect((await readStorageUsage(db.pool, [user])).get(user)).toBe(750);
    const settled = await db.pool.query('SELECT job_id, bytes FROM job_content_usage WHERE user_id = $1', [user]);
    expect(settled.rows).toEqual([{ job_id: old, bytes: 700 }]);
    // Settled: a page the read model shows later does not change the job's figure.
    await page(old, { bytes: 5, content_hash: hash('h') });
    expect((await readStorageUsage(db.pool, [user])).get(user)).toBe(750);
    // A recent job settles once it has been over SETTLE_AFTER_MS.
    expect((await readStorageUsage(db.pool, [user], new Date(Date.now() + SETTLE_AFTER_MS + 60_000))).get(user)).toBe(750);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM job_content_usage WHERE user_id = $1', [user])).rows[0].n).toBe(2);
    // Retention (or a request) deletes the old job's content: its bytes no longer count.
    await db.pool.query('INSERT INTO job_content_deletions VALUES ($1)', [old]);
    expect((await readStorageUsage(db.pool, [user])).get(user)).toBe(50);
  });

  it("knows a job's owner from the ledger, else the read model; reads a storage_bytes override", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await inTransaction(db.pool, (tx) => recordJobs(tx, [{ job_id: a, user_id: 'ledger-user', max_pages: 1 }]));
    await db.pool.query('INSERT INTO jobs VALUES ($1, $2, NULL)', [b, 'model-user']);
    expect(await jobOwner(db.pool, a)).toBe('ledger-user');
    expect(await jobOwner(db.pool, b)).toBe('model-user');
    expect(await jobOwner(db.pool, randomUUID())).toBeUndefined();
    await setUserQuotas(db.pool, 'big', { storage_bytes: 50 * 1024 ** 3 });
    const limits = await quotaLimitsOf(db.pool, ['big', 'other'], DEFAULT_QUOTAS);
    expect(limits.get('big')!.storage_bytes).toBe(50 * 1024 ** 3);
    expect(limits.get('other')!.storage_bytes).toBe(DEFAULT_QUOTAS.storage_bytes);
  });
});
