/**
 * The webhook quota checks against a real Postgres: concurrent calls of one user cannot pass the
 * limit together (the user's lock), a refused or rolled-back call counts nothing, a user's
 * override wins over the default, and another user's use never counts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_MIGRATIONS } from '../config/migrations.ts';
import { migrate } from '../migrate.ts';
import { inTransaction } from '../pool.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { WEBHOOK_MIGRATIONS, WEBHOOK_MIGRATION_OWNER } from '../webhooks/migrations.ts';
import { QuotaExceededError } from './errors.ts';
import { admitWebhook, admitWebhookRequest, purgeWebhookUsage, readWebhookUsage } from './webhook-quota-guard.ts';
import { setUserWebhookQuotas } from './webhook-quota-limits.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('trawl_webhook_quota');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
});
afterAll(async () => {
  await db?.drop();
});

const limits = { webhooks: 3, webhook_tests_per_hour: 4, webhook_deliveries_per_hour: 100 };

const subscribe = (user: string) =>
  inTransaction(db.pool, async (tx) => {
    await admitWebhook(tx, user, limits);
    await tx.query("INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, 'https://example.com/h', '{job.completed}', 'x')", [randomUUID(), user]);
  });

const settled = async (p: readonly Promise<unknown>[]) => {
  const r = await Promise.allSettled(p);
  return { ok: r.filter((x) => x.status === 'fulfilled').length, refused: r.filter((x) => x.status === 'rejected' && x.reason instanceof QuotaExceededError).length };
};

describe('webhook quota guard', () => {
  it('ten concurrent subscriptions with room for three: exactly three are made', async () => {
    const user = `u-${randomUUID()}`;
    expect(await settled(Array.from({ length: 10 }, () => subscribe(user)))).toEqual({ ok: 3, refused: 7 });
    expect((await readWebhookUsage(db.pool, user)).webhooks).toBe(3);
    // A deleted one makes room; an inactive one does not.
    await db.pool.query('UPDATE webhooks SET active = false WHERE user_id = $1', [user]);
    await expect(subscribe(user)).rejects.toMatchObject({ limit: 'webhooks', value: 3, used: 3 });
    await db.pool.query('UPDATE webhooks SET deleted_at = now() WHERE id = (SELECT id FROM webhooks WHERE user_id = $1 LIMIT 1)', [user]);
    await subscribe(user);
  });

  it('ten concurrent test calls with room for four: four counted, six refused with a retry-after; a rolled-back call counts nothing', async () => {
    const user = `u-${randomUUID()}`;
    const other = `u-${randomUUID()}`;
    await expect(inTransaction(db.pool, async (tx) => {
      await admitWebhookRequest(tx, user, limits);
      throw new Error('the delivery was not found');
    })).rejects.toThrow(/not found/);
    expect((await readWebhookUsage(db.pool, user)).webhook_tests_last_hour).toBe(0);

    expect(await settled(Array.from({ length: 10 }, () => inTransaction(db.pool, (tx) => admitWebhookRequest(tx, user, limits))))).toEqual({ ok: 4, refused: 6 });
    const refusal = await inTransaction(db.pool, (tx) => admitWebhookRequest(tx, user, limits)).then(() => undefined, (err: unknown) => err as QuotaExceededError);
    expect(refusal).toMatchObject({ limit: 'webhook_tests_per_hour', value: 4, used: 4 });
    expect(refusal!.retryAfterSeconds).toBeGreaterThan(3540);
    expect(refusal!.retryAfterSeconds).toBeLessThanOrEqual(3600);
    expect(await readWebhookUsage(db.pool, user)).toEqual({ webhooks: 0, webhook_tests_last_hour: 4, webhook_deliveries_last_hour: 0 });
    expect((await readWebhookUsage(db.pool, other)).webhook_tests_last_hour).toBe(0);
    await inTransaction(db.pool, (tx) => admitWebhookRequest(tx, other, limits));

    // An hour later the calls have left the window (and are purged a while after).
    await db.pool.query("UPDATE webhook_usage SET minute = minute - interval '61 minutes' WHERE user_id = $1", [user]);
    await inTransaction(db.pool, (tx) => admitWebhookRequest(tx, user, limits));
    expect((await readWebhookUsage(db.pool, user)).webhook_tests_last_hour).toBe(1);
    await db.pool.query("UPDATE webhook_usage SET minute = minute - interval '2 hours' WHERE user_id = $1 AND minute < now() - interval '1 hour'", [user]);
    expect(await purgeWebhookUsage(db.pool)).toBeGreaterThanOrEqual(1);
  });

  it("a user's override wins over the default", async () => {
    const user = `u-${randomUUID()}`;
    await setUserWebhookQuotas(db.pool, user, { webhooks: 1 });
    await subscribe(user);
    await expect(subscribe(user)).rejects.toMatchObject({ limit: 'webhooks', value: 1 });
    await setUserWebhookQuotas(db.pool, user, { webhooks: null });
    await subscribe(user);
  });
});
