/**
 * Webhook quota checks at the API, each inside the caller's transaction and under the user's
 * quota lock (quota-ledger.ts), so concurrent calls of one user — on any API instance — cannot
 * both take the last unit: the caller creates the subscription, or records the test or
 * re-delivery, in the same transaction, and a failure after the check rolls the count back too.
 *
 * Test and re-delivery calls are counted in `webhook_usage.requests` (minute buckets,
 * hourly-window.ts); deliveries in `webhook_usage.deliveries`, by apps/services/webhooks.
 */
import type { Pool, PoolClient } from 'pg';
import { IN_WINDOW_SQL, WINDOW_MS, type Bucket } from './hourly-window.ts';
import { QuotaExceededError } from './errors.ts';
import { lockUserQuotas } from './quota-ledger.ts';
import { decideWebhook, decideWebhookRequest } from './webhook-quota-decision.ts';
import { webhookQuotaLimitsOf, type WebhookQuotaLimits } from './webhook-quota-limits.ts';

async function liveWebhooks(db: Pool | PoolClient, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE user_id = $1 AND deleted_at IS NULL', [userId]);
  return rows[0]!.n;
}

/** Refuses a subscription past `webhooks` (QuotaExceededError); the caller inserts it in the same transaction. */
export async function admitWebhook(tx: PoolClient, userId: string, defaults: WebhookQuotaLimits): Promise<void> {
  await lockUserQuotas(tx, [userId]);
  const limits = (await webhookQuotaLimitsOf(tx, [userId], defaults)).get(userId)!;
  const decision = decideWebhook(limits, await liveWebhooks(tx, userId));
  if (!decision.ok) throw new QuotaExceededError(decision);
}

/**
 * Counts one test or re-delivery call, or refuses it past `webhook_tests_per_hour`
 * (QuotaExceededError with `retryAfterSeconds`: when the oldest counted call leaves the hour).
 */
export async function admitWebhookRequest(tx: PoolClient, userId: string, defaults: WebhookQuotaLimits): Promise<void> {
  await lockUserQuotas(tx, [userId]);
  const limits = (await webhookQuotaLimitsOf(tx, [userId], defaults)).get(userId)!;
  const { rows } = await tx.query<{ now: number; buckets: Bucket[] }>(
    `SELECT (extract(epoch FROM now()) * 1000)::float8 AS now,
       coalesce((SELECT json_agg(json_build_object('at', extract(epoch FROM minute) * 1000, 'n', requests))
                 FROM webhook_usage WHERE user_id = $1 AND requests > 0 AND ${IN_WINDOW_SQL}), '[]') AS buckets`,
    [userId],
  );
  const decision = decideWebhookRequest(limits, rows[0]!.buckets, rows[0]!.now);
  if (!decision.ok) throw new QuotaExceededError(decision);
  await tx.query(
    `INSERT INTO webhook_usage (user_id, minute, requests) VALUES ($1, date_trunc('minute', now()), 1)
     ON CONFLICT (user_id, minute) DO UPDATE SET requests = webhook_usage.requests + 1`,
    [userId],
  );
}

export interface WebhookUsage {
  /** Subscriptions not deleted. */
  readonly webhooks: number;
  /** Test and re-delivery calls in the last hour. */
  readonly webhook_tests_last_hour: number;
  /** Delivery attempts of the user's events in the last hour, with what webhooks instances have reserved to send within seconds. */
  readonly webhook_deliveries_last_hour: number;
}

/** What `GET /quotas` shows against the webhook limits. */
export async function readWebhookUsage(db: Pool | PoolClient, userId: string): Promise<WebhookUsage> {
  const { rows } = await db.query<{ tests: number; deliveries: number }>(
    `SELECT coalesce(sum(requests), 0)::int AS tests, coalesce(sum(deliveries), 0)::int AS deliveries
     FROM webhook_usage WHERE user_id = $1 AND ${IN_WINDOW_SQL}`,
    [userId],
  );
  return { webhooks: await liveWebhooks(db, userId), webhook_tests_last_hour: rows[0]!.tests, webhook_deliveries_last_hour: rows[0]!.deliveries };
}

/** Deletes buckets that left the window long ago (any instance, any time: idempotent). */
export async function purgeWebhookUsage(db: Pool | PoolClient): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM webhook_usage WHERE minute < now() - make_interval(secs => ${(2 * WINDOW_MS) / 1000})`);
  return rowCount ?? 0;
}
