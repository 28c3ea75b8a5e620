/**
 * Reservations against a real Postgres: a pending one counts, a released one does not, a lapsed one
 * stops counting, a confirmed one counts for good; concurrent reservations never pass the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { CONFIG_MIGRATIONS } from '../config/migrations.ts';
import { migrate } from '../migrate.ts';
import { inTransaction } from '../pool.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { readUsage } from './quota-ledger.ts';
import { confirmJob, releaseJob, reserveJob } from './quota-reservation.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('trawl_quota_reservation');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await db.pool.query('CREATE TABLE jobs (job_id text PRIMARY KEY, status text, pages_fetched int, pages_failed int)');
});
afterAll(async () => {
  await db?.drop();
});

const limits = { active_jobs: 2, pages_per_day: 1000, schedules: 2, min_interval_seconds: 60, storage_bytes: 1000 };
const usage = async (user: string) => (await inTransaction(db.pool, (tx) => readUsage(tx, [user]))).get(user);

describe('quota reservations', () => {
  it('count while pending, go when released, stay once confirmed, lapse when left behind', async () => {
    const user = `u-${randomUUID()}`;
    const [a, b, lost] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await reserveJob(db.pool, { jobId: a, userId: user, wantedPages: 700 }, limits)).toEqual({ maxPages: 700, capped: false });
    expect(await reserveJob(db.pool, { jobId: b, userId: user, wantedPages: 700 }, limits)).toEqual({ maxPages: 300, capped: true });
    await expect(reserveJob(db.pool, { jobId: lost, userId: user, wantedPages: 1 }, limits)).rejects.toMatchObject({ code: 'TRAWL_QUOTA_EXCEEDED', limit: 'active_jobs' });
    expect(await usage(user)).toEqual({ active_jobs: 2, pages_today: 1000 });

    await inTransaction(db.pool, (tx) => confirmJob(tx, a));
    await releaseJob(db.pool, b);
    // Releasing a confirmed reservation does nothing.
    await releaseJob(db.pool, a);
    expect(await usage(user)).toEqual({ active_jobs: 1, pages_today: 700 });

    // A reservation whose admission died before confirming or releasing it stops counting when it lapses.
    await reserveJob(db.pool, { jobId: lost, userId: user, wantedPages: 100 }, limits);
    expect(await usage(user)).toEqual({ active_jobs: 2, pages_today: 800 });
    await db.pool.query("UPDATE job_quota_ledger SET pending_until = now() - interval '1 second' WHERE job_id = $1", [lost]);
    expect(await usage(user)).toEqual({ active_jobs: 1, pages_today: 700 });
  });

  it('serialises concurrent reservations of one user: never more than the limit', async () => {
    const user = `u-${randomUUID()}`;
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => reserveJob(db.pool, { jobId: randomUUID(), userId: user, wantedPages: 10 }, { ...limits, active_jobs: 3 })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(await usage(user)).toEqual({ active_jobs: 3, pages_today: 30 });
  });
});
