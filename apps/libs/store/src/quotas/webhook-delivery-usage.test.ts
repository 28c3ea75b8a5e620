/**
 * The delivery budget's ledger against a real Postgres: reservations racing from several
 * instances never grant more than the hour's limit together; a spent hour says when room comes
 * back; what a lease gives back is room again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { WEBHOOK_MIGRATIONS, WEBHOOK_MIGRATION_OWNER } from '../webhooks/migrations.ts';
import { WINDOW_MS } from './hourly-window.ts';
import { giveBackDeliveries, reserveDeliveries } from './webhook-delivery-usage.ts';
import { readWebhookUsage } from './webhook-quota-guard.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('trawl_webhook_budget');
  await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
});
afterAll(async () => {
  await db?.drop();
});

describe('delivery reservations', () => {
  it('twenty concurrent leases of 3 under a limit of 10 grant 10 in all; then the hour is spent until its oldest minute leaves', async () => {
    const user = `u-${randomUUID()}`;
    const leases = await Promise.all(Array.from({ length: 20 }, () => reserveDeliveries(db.pool, user, 10, 3)));
    expect(leases.reduce((sum, l) => sum + l.granted, 0)).toBe(10);
    expect((await readWebhookUsage(db.pool, user)).webhook_deliveries_last_hour).toBe(10);
    const spent = await reserveDeliveries(db.pool, user, 10, 3);
    expect(spent.granted).toBe(0);
    expect(spent.roomAt).toBe(leases[0]!.minute.getTime() + WINDOW_MS);
    // Another user's hour is their own.
    expect((await reserveDeliveries(db.pool, `u-${randomUUID()}`, 10, 3)).granted).toBe(3);
  });

  it('what a lease did not use is room again, given back alone or with the next reservation', async () => {
    const user = `u-${randomUUID()}`;
    const a = await reserveDeliveries(db.pool, user, 5, 5);
    expect(a.granted).toBe(5);
    const b = await reserveDeliveries(db.pool, user, 5, 5, { userId: user, minute: a.minute, units: 2 });
    expect(b.granted).toBe(2);
    await giveBackDeliveries(db.pool, [{ userId: user, minute: b.minute, units: 1 }, { userId: user, minute: b.minute, units: 1 }]);
    expect((await readWebhookUsage(db.pool, user)).webhook_deliveries_last_hour).toBe(3);
  });
});
