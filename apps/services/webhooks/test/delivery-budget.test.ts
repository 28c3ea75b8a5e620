/**
 * The per-user delivery budget (`webhook_deliveries_per_hour`) on the real stack, with a receiver
 * that verifies every signature: a user over their budget has their deliveries held — not sent,
 * not failed, no attempt counted, no tier spent — while another user's go out at once; when their
 * hour frees room the held ones are sent, each job's in order, nothing twice. A delivery held past
 * TRAWL_WEBHOOK_HOLD_MAX_MS is given up with its reason. Two services' budgets on one database
 * never grant more than the hour together.
 *
 * The hour is made to pass by moving the user's counted minutes back an hour in `webhook_usage`
 * (what the clock would do), so the test does not wait for it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_MIGRATIONS, migrate, readWebhookUsage, setUserWebhookQuotas } from '@trawl/store';
import { waitFor } from '@trawl/streams/testing';
import { DeliveryBudget } from '../src/delivery-budget.ts';
import { WebhookHarness } from './support/webhook-harness.ts';

// Held events wait in the longest tier at most (4 s here) before they are looked at again.
const DELAYS = [1_000, 2_000, 4_000];
const harness = new WebhookHarness('webhooks-budget', DELAYS, { timeoutMs: 2_000, itemsWindowMs: 300, itemsMax: 500, itemsMaxBytes: 1_000_000, pollMs: 200 });
const { receiver } = harness;

beforeAll(async () => {
  await harness.start();
  // The per-user overrides live in the configuration model's user_quotas.
  await migrate(harness.db.pool, 'config', CONFIG_MIGRATIONS);
}, 90_000);
afterAll(() => harness.stop());

const passHour = (user: string) => harness.db.pool.query("UPDATE webhook_usage SET minute = minute - interval '61 minutes' WHERE user_id = $1", [user]);
const types = (path: string) => receiver.unique(path).map((r) => `${r.body.job_id}:${r.body.type}`);

describe('the delivery budget', () => {
  it("a user over their hourly budget has deliveries held while another user's go out at once; the held ones follow when the hour frees room", async () => {
    const greedy = `greedy-${randomUUID()}`;
    const modest = `modest-${randomUUID()}`;
    await setUserWebhookQuotas(harness.db.pool, greedy, { webhook_deliveries_per_hour: 3 });
    const hook = await harness.subscribe(greedy, '/greedy', ['job.started', 'job.completed']);
    await harness.subscribe(modest, '/modest', ['job.started', 'job.completed']);
    const jobs = [randomUUID(), randomUUID(), randomUUID()];
    for (const j of jobs) await harness.started(j, greedy);
    for (const j of jobs) await harness.ended(j);

    await waitFor(async () => {
      const rows = await harness.rows(hook);
      return rows.filter((r) => r.status === 'delivered').length === 3 && rows.filter((r) => /^held: /.test(r.last_error ?? '')).length === 3;
    }, { message: '3 delivered and 3 held' });
    const held = (await harness.rows(hook)).filter((r) => r.status !== 'delivered');
    for (const r of held) {
      expect(r).toMatchObject({ status: 'retrying', attempts: 0 });
      expect(r.last_error).toMatch(/^held: the delivery budget of this webhook's owner \(webhook_deliveries_per_hour, 3\) is spent/);
      // Next try when the hour frees room: about an hour from now, not a tier's delay.
      expect(r.next_attempt_at!.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    }
    expect(receiver.all.filter((r) => r.path === '/greedy')).toHaveLength(3);
    expect((await readWebhookUsage(harness.db.pool, greedy)).webhook_deliveries_last_hour).toBe(3);

    // Another user's events, produced now, are delivered at once (well within the first tier's wait).
    const other = randomUUID();
    await harness.started(other, modest);
    await harness.ended(other);
    await waitFor(() => receiver.unique('/modest').length === 2, { timeoutMs: 10_000, message: 'the other user\'s deliveries' });
    expect(types('/modest')).toEqual([`${other}:job.started`, `${other}:job.completed`]);
    // Still held meanwhile (a held event comes back every few seconds here, and is held again).
    await new Promise((r) => setTimeout(r, 6_000));
    expect(receiver.all.filter((r) => r.path === '/greedy')).toHaveLength(3);
    // What the other user's service instance leased and did not use goes back within seconds.
    await waitFor(async () => (await readWebhookUsage(harness.db.pool, modest)).webhook_deliveries_last_hour === 2, { timeoutMs: 15_000, message: 'the unused lease given back' });

    // The hour passes: the held deliveries go, each job's started before its completed, nothing twice.
    await passHour(greedy);
    await waitFor(() => receiver.unique('/greedy').length === 6, { timeoutMs: 30_000, message: () => `all six (${types('/greedy').join(', ')})` });
    const got = receiver.all.filter((r) => r.path === '/greedy');
    expect(got).toHaveLength(6);
    expect(got.every((r) => r.validSignature)).toBe(true);
    for (const j of jobs) expect(got.filter((r) => r.body.job_id === j).map((r) => r.body.type)).toEqual(['job.started', 'job.completed']);
    await waitFor(async () => (await harness.rows(hook)).every((r) => r.status === 'delivered' && r.attempts === 1), { message: 'rows delivered at their one attempt' });
    expect(harness.service.consumer.stats().deadLettered).toBe(0);
  });

  it('a delivery held longer than TRAWL_WEBHOOK_HOLD_MAX_MS (24 h) is given up with its reason, and can be re-delivered', async () => {
    const stuck = `stuck-${randomUUID()}`;
    await setUserWebhookQuotas(harness.db.pool, stuck, { webhook_deliveries_per_hour: 1 });
    const hook = await harness.subscribe(stuck, '/stuck', ['job.started', 'job.completed']);
    const job = randomUUID();
    await harness.started(job, stuck);
    await harness.ended(job);
    await waitFor(async () => (await harness.rows(hook)).some((r) => /^held: /.test(r.last_error ?? '')), { message: 'one held' });
    // As if it had waited a day.
    await harness.db.pool.query("UPDATE webhook_deliveries SET created_at = now() - interval '25 hours' WHERE webhook_id = $1 AND status = 'retrying'", [hook]);
    await waitFor(async () => (await harness.rows(hook)).some((r) => r.status === 'failed'), { timeoutMs: 20_000, message: 'the held delivery given up' });
    const failed = (await harness.rows(hook)).find((r) => r.status === 'failed')!;
    expect(failed).toMatchObject({ type: 'job.completed', attempts: 0, next_attempt_at: null });
    expect(failed.last_error).toBe("not sent: the delivery budget of this webhook's owner (webhook_deliveries_per_hour, 1) stayed spent for 1440 min");
    expect(receiver.unique('/stuck').map((r) => r.body.type)).toEqual(['job.started']);
    // A re-delivery (asked through the API: its own limit there) is sent whatever the budget.
    await harness.db.pool.query("UPDATE webhook_deliveries SET status = 'requested' WHERE webhook_id = $1 AND status = 'failed'", [hook]);
    await waitFor(() => receiver.unique('/stuck').length === 2, { message: 'the re-delivery' });
  });

  it('two instances\' budgets over one database never grant more than the hour together', async () => {
    const user = `shared-${randomUUID()}`;
    await setUserWebhookQuotas(harness.db.pool, user, { webhook_deliveries_per_hour: 250 });
    const defaults = { webhooks: 20, webhook_tests_per_hour: 100, webhook_deliveries_per_hour: 10_000 };
    const a = new DeliveryBudget(harness.db.pool, defaults, harness.logger);
    const b = new DeliveryBudget(harness.db.pool, defaults, harness.logger);
    try {
      const takes = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).take(user)));
      const units = takes.filter((t) => 'giveBack' in t);
      expect(units).toHaveLength(250);
      expect((await readWebhookUsage(harness.db.pool, user)).webhook_deliveries_last_hour).toBe(250);
      // The refused ones wait for the hour: about an hour from now.
      const hold = takes.find((t) => 'until' in t) as { until: number };
      expect(hold.until).toBeGreaterThan(Date.now() + 55 * 60_000);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
