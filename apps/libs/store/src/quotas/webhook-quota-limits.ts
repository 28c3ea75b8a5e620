/**
 * Per-user limits on webhooks (issue 32, item 5): every event fans out to every subscription of
 * its owner, so subscriptions, test and re-delivery calls, and deliveries are what one user can
 * make the shared webhooks service send to outside URLs. Kept apart from quota-limits.ts (the
 * crawl quotas) but read and overridden the same way: defaults from the environment, an
 * operator's per-user override in `user_quotas` (NULL: the default).
 *
 * | limit | default | counted |
 * |---|---|---|
 * | `webhooks` | 20 | subscriptions not deleted (active or not: `PATCH active` needs no room) |
 * | `webhook_tests_per_hour` | 100 | `POST /webhooks/:id/test` and `…/redeliver` calls in the last hour (webhook-quota-guard.ts) |
 * | `webhook_deliveries_per_hour` | 10,000 | delivery attempts of the user's events in the last hour, retries included (apps/services/webhooks, delivery-budget.ts) |
 */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

export interface WebhookQuotaLimits {
  readonly webhooks: number;
  readonly webhook_tests_per_hour: number;
  readonly webhook_deliveries_per_hour: number;
}

export type WebhookQuotaName = keyof WebhookQuotaLimits;

export const WEBHOOK_QUOTA_NAMES: readonly WebhookQuotaName[] = ['webhooks', 'webhook_tests_per_hour', 'webhook_deliveries_per_hour'];

export const DEFAULT_WEBHOOK_QUOTAS: WebhookQuotaLimits = {
  webhooks: 20,
  webhook_tests_per_hour: 100,
  webhook_deliveries_per_hour: 10_000,
};

const ENV: Readonly<Record<WebhookQuotaName, string>> = {
  webhooks: 'TRAWL_QUOTA_WEBHOOKS',
  webhook_tests_per_hour: 'TRAWL_QUOTA_WEBHOOK_TESTS_PER_HOUR',
  webhook_deliveries_per_hour: 'TRAWL_QUOTA_WEBHOOK_DELIVERIES_PER_HOUR',
};

/** The defaults from `TRAWL_QUOTA_WEBHOOK*`, else DEFAULT_WEBHOOK_QUOTAS. */
export function webhookQuotasFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookQuotaLimits {
  const out: Record<string, number> = {};
  for (const name of WEBHOOK_QUOTA_NAMES) {
    const raw = env[ENV[name]];
    if (raw === undefined || raw === '') {
      out[name] = DEFAULT_WEBHOOK_QUOTAS[name];
      continue;
    }
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${ENV[name]} must be a whole number ≥ 0, got "${raw}"`);
    out[name] = n;
  }
  return out as unknown as WebhookQuotaLimits;
}

/** Each user's webhook limits: their overrides (`user_quotas`, CONFIG_MIGRATIONS step 6) over the defaults. */
export async function webhookQuotaLimitsOf(db: Db, userIds: readonly string[], defaults: WebhookQuotaLimits): Promise<Map<string, WebhookQuotaLimits>> {
  const out = new Map(userIds.map((u) => [u, defaults]));
  if (userIds.length === 0) return out;
  const { rows } = await db.query<{ user_id: string } & { [K in WebhookQuotaName]: number | null }>(
    `SELECT user_id, ${WEBHOOK_QUOTA_NAMES.join(', ')} FROM user_quotas WHERE user_id = ANY($1::text[])`,
    [[...new Set(userIds)]],
  );
  for (const r of rows) {
    const merged = { ...defaults };
    for (const name of WEBHOOK_QUOTA_NAMES) if (r[name] !== null) (merged as Record<WebhookQuotaName, number>)[name] = Number(r[name]);
    out.set(r.user_id, merged);
  }
  return out;
}

/** Sets (or with null, clears) a user's webhook overrides. */
export async function setUserWebhookQuotas(db: Db, userId: string, limits: Partial<Record<WebhookQuotaName, number | null>>): Promise<void> {
  const names = WEBHOOK_QUOTA_NAMES.filter((n) => limits[n] !== undefined);
  if (names.length === 0) return;
  await db.query(
    `INSERT INTO user_quotas (user_id, ${names.join(', ')}) VALUES ($1, ${names.map((_, i) => `$${i + 2}`).join(', ')})
     ON CONFLICT (user_id) DO UPDATE SET ${names.map((n) => `${n} = EXCLUDED.${n}`).join(', ')}, updated_at = now()`,
    [userId, ...names.map((n) => limits[n])],
  );
}
