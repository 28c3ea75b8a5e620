/**
 * The ledger against a real Postgres: usage from started jobs, settled from the read model's
 * `jobs` rows (a table of projector-pg's shape, with the columns the ledger reads).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { CONFIG_MIGRATIONS } from '../config/migrations.ts';
import { migrate } from '../migrate.ts';
import { inTransaction } from '../pool.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { admitJob, createScheduleWithinQuota } from './quota-guard.ts';
import { readUsage, recordJobs } from './quota-ledger.ts';
import { setUserQuotas } from './quota-limits.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('trawl_quota');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await db.pool.query('CREATE TABLE jobs (job_id text PRIMARY KEY, status text, pages_fetched int, pages_failed int)');
});
afterAll(async () => {
  await db?.drop();
});

const limits = { active_jobs: 2, pages_per_day: 1000, schedules: 2, min_interval_seconds: 60, storage_bytes: 1000 };

describe('quota ledger', () => {
  it('counts running jobs by their max_pages, ended ones by what they fetched, only within 24 h', async () => {
    const user = `u-${randomUUID()}`;
    const [a, b, old] = [randomUUID(), randomUUID(), randomUUID()];
    await inTransaction(db.pool, (tx) => recordJobs(tx, [{ job_id: a, user_id: user, max_pages: 400 }, { job_id: b, user_id: user, max_pages: 300 }]));
    await db.pool.query("INSERT INTO job_quota_ledger (job_id, user_id, created_at, max_pages, settled_pages) VALUES ($1, $2, now() - interval '25 hours', 900, 900)", [old, user]);
    expect((await inTransaction(db.pool, (tx) => readUsage(tx, [user]))).get(user)).toEqual({ active_jobs: 2, pages_today: 700 });
    // b ends having fetched 40 pages (and failed 2): it stops counting as active, and counts 42.
    await db.pool.query("INSERT INTO jobs VALUES ($1, 'finished', 40, 2), ($2, 'running', 10, 0)", [b, a]);
    expect((await inTransaction(db.pool, (tx) => readUsage(tx, [user]))).get(user)).toEqual({ active_jobs: 1, pages_today: 442 });
    const { rows } = await db.pool.query('SELECT settled_pages FROM job_quota_ledger WHERE job_id = $1', [b]);
    expect(rows[0].settled_pages).toBe(42);
  });

  it('admits jobs up to the limits, capping the last one to what is left of the day', async () => {
    const user = `u-${randomUUID()}`;
    const start = (pages: number) =>
      inTransaction(db.pool, async (tx) => {
        const admitted = await admitJob(tx, user, limits, pages);
        await recordJobs(tx, [{ job_id: randomUUID(), user_id: user, max_pages: admitted.maxPages }]);
        return admitted;
      });
    expect(await start(700)).toEqual({ maxPages: 700, capped: false });
    expect(await start(700)).toEqual({ maxPages: 300, capped: true });
    await expect(start(1)).rejects.toMatchObject({ code: 'TRAWL_QUOTA_EXCEEDED', limit: 'active_jobs', value: 2, retriable: true });
  });

  it('serialises concurrent starts of one user: never more than the limit', async () => {
    const user = `u-${randomUUID()}`;
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        inTransaction(db.pool, async (tx) => {
          const admitted = await admitJob(tx, user, { ...limits, active_jobs: 3 }, 10);
          await recordJobs(tx, [{ job_id: randomUUID(), user_id: user, max_pages: admitted.maxPages }]);
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
  });

  it('per-user overrides win over the defaults', async () => {
    const user = `u-${randomUUID()}`;
    await setUserQuotas(db.pool, user, { active_jobs: 0 });
    await expect(inTransaction(db.pool, (tx) => admitJob(tx, user, limits, 1))).rejects.toMatchObject({ limit: 'active_jobs', value: 0 });
    await setUserQuotas(db.pool, user, { active_jobs: null });
    await expect(inTransaction(db.pool, (tx) => admitJob(tx, user, limits, 1))).resolves.toMatchObject({ maxPages: 1 });
  });

  it('creates schedules up to the limit and refuses a cadence below the minimum interval', async () => {
    const user = `u-${randomUUID()}`;
    const create = (cadence: { cron?: string; intervalMs?: number }) => createScheduleWithinQuota(db.pool, { id: randomUUID(), owner_id: user, request: { spider: null, start_urls: ['http://a.test/'], depth: 0, max_pages: null, params: {} }, cadence }, limits);
    await expect(create({ intervalMs: 1_000 })).rejects.toMatchObject({ limit: 'min_interval_seconds', retriable: false });
    await expect(create({ cron: '* * * * * *' })).rejects.toMatchObject({ limit: 'min_interval_seconds' });
    await create({ intervalMs: 60_000 });
    await create({ cron: '*/5 * * * *' });
    await expect(create({ cron: '0 * * * *' })).rejects.toMatchObject({ limit: 'schedules', value: 2, used: 2 });
  });
});
