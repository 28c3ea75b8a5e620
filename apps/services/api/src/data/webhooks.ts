/**
 * Webhook subscriptions and their deliveries, scoped to an owner (the tables: @trawl/store's
 * WEBHOOK_MIGRATIONS). The secret is written here, sealed under TRAWL_SECRETS_KEY with the
 * webhook's id (@trawl/store/secrets), and never read back by any query of this file.
 */
import { randomUUID } from 'node:crypto';
import { WEBHOOK_TEST_TYPE, type Pool } from '@trawl/store';
import { sealWebhookSecret, type SecretBox } from '@trawl/store/secrets';
import { sortAt, type Cursor } from '../http/cursor.ts';
// The writes a quota admits take the transaction it was checked in (routes/webhooks.ts).
import type { PoolClient } from '@trawl/store';

export interface WebhookView {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly job_id: string | null;
  readonly schedule_id: string | null;
  readonly active: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface NewWebhook {
  readonly url: string;
  readonly events: readonly string[];
  readonly secret: string;
  readonly job_id?: string | null;
  readonly schedule_id?: string | null;
  readonly active?: boolean;
}

export type WebhookPatch = Partial<NewWebhook>;

const VIEW = `id, url, events, job_id, schedule_id, active, created_at, updated_at`;

export async function createWebhook(pool: Pool | PoolClient, userId: string, w: NewWebhook, secrets: SecretBox): Promise<WebhookView> {
  const id = randomUUID();
  const { rows } = await pool.query<WebhookView>(
    `INSERT INTO webhooks (id, user_id, url, events, secret, job_id, schedule_id, active)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${VIEW}`,
    [id, userId, w.url, [...new Set(w.events)], sealWebhookSecret(secrets, id, w.secret), w.job_id ?? null, w.schedule_id ?? null, w.active ?? true],
  );
  return rows[0]!;
}

export async function getWebhook(pool: Pool, id: string, userId: string): Promise<WebhookView | undefined> {
  const { rows } = await pool.query<WebhookView>(`SELECT ${VIEW} FROM webhooks WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL`, [id, userId]);
  return rows[0];
}

export async function listWebhooks(pool: Pool, userId: string): Promise<WebhookView[]> {
  const { rows } = await pool.query<WebhookView>(`SELECT ${VIEW} FROM webhooks WHERE user_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, [userId]);
  return rows;
}

export async function updateWebhook(pool: Pool, id: string, userId: string, patch: WebhookPatch, secrets: SecretBox): Promise<WebhookView | undefined> {
  const sets: string[] = [];
  const args: unknown[] = [id, userId];
  const set = (column: string, value: unknown): void => {
    args.push(value);
    sets.push(`${column} = $${args.length}`);
  };
  if (patch.url !== undefined) set('url', patch.url);
  if (patch.events !== undefined) set('events', [...new Set(patch.events)]);
  if (patch.secret !== undefined) set('secret', sealWebhookSecret(secrets, id, patch.secret));
  if (patch.job_id !== undefined) set('job_id', patch.job_id);
  if (patch.schedule_id !== undefined) set('schedule_id', patch.schedule_id);
  if (patch.active !== undefined) set('active', patch.active);
  const { rows } = await pool.query<WebhookView>(
    `UPDATE webhooks SET ${[...sets, 'updated_at = now()'].join(', ')}
     WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL RETURNING ${VIEW}`,
    args,
  );
  return rows[0];
}

/** Deactivates it for good; its delivery history stays until the owner's data is purged. */
export async function deleteWebhook(pool: Pool, id: string, userId: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    'UPDATE webhooks SET active = false, deleted_at = now(), updated_at = now() WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL',
    [id, userId],
  );
  return (rowCount ?? 0) > 0;
}

export interface DeliveryView {
  readonly id: string;
  readonly event_id: string;
  readonly type: string;
  readonly job_id: string | null;
  readonly status: string;
  readonly attempts: number;
  readonly last_error: string | null;
  readonly last_status: number | null;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
  readonly delivered_at: string | null;
  readonly sort_at: string;
}

const DELIVERY_VIEW = `id, event_id, type, job_id, status, attempts, last_error, last_status, next_attempt_at, created_at, delivered_at, ${sortAt('created_at')} AS sort_at`;

/** Newest first, keyset-paged on (created_at, id). */
export async function listDeliveries(pool: Pool, webhookId: string, q: { readonly limit: number; readonly after?: Cursor; readonly status?: string }): Promise<DeliveryView[]> {
  const args: unknown[] = [webhookId];
  const where = ['webhook_id = $1'];
  if (q.status) {
    args.push(q.status);
    where.push(`status = $${args.length}`);
  }
  if (q.after) {
    args.push(q.after.at, q.after.id);
    where.push(`(created_at, id) < ($${args.length - 1}::timestamptz, $${args.length})`);
  }
  args.push(q.limit);
  const { rows } = await pool.query<DeliveryView>(
    `SELECT ${DELIVERY_VIEW} FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${args.length}`,
    args,
  );
  return rows;
}

/**
 * Asks apps/services/webhooks to send a delivery again (one attempt, whatever its state; the body and its
 * id unchanged, so a receiver that has it already can tell). Undefined: no such delivery.
 */
export async function requestRedelivery(pool: Pool | PoolClient, webhookId: string, deliveryId: string): Promise<DeliveryView | undefined> {
  const { rows } = await pool.query<DeliveryView>(
    `UPDATE webhook_deliveries SET status = 'requested', next_attempt_at = now(), updated_at = now()
     WHERE id = $1 AND webhook_id = $2 RETURNING ${DELIVERY_VIEW}`,
    [deliveryId, webhookId],
  );
  return rows[0];
}

/** A `webhook.test` delivery, sent by apps/services/webhooks like a re-delivery. */
export async function requestTestDelivery(pool: Pool | PoolClient, webhookId: string): Promise<DeliveryView> {
  const id = randomUUID();
  const createdAt = new Date().toISOString();
  const body = { id, type: WEBHOOK_TEST_TYPE, created_at: createdAt, data: { webhook_id: webhookId } };
  const { rows } = await pool.query<DeliveryView>(
    `INSERT INTO webhook_deliveries (id, webhook_id, event_id, type, body, status, next_attempt_at, created_at)
     VALUES ($1, $2, $1, $3, $4, 'requested', now(), $5) RETURNING ${DELIVERY_VIEW}`,
    [id, webhookId, WEBHOOK_TEST_TYPE, body, createdAt],
  );
  return rows[0]!;
}
