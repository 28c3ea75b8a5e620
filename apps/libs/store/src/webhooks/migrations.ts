import type { Migration } from '../migrate.ts';

/** Migration owner of the webhook tables: written by the API (subscriptions, re-deliveries) and apps/services/webhooks (deliveries). */
export const WEBHOOK_MIGRATION_OWNER = 'webhooks';

/**
 * `webhooks`: a user's subscriptions; `secret` is kept sealed (AES-256-GCM under
 * TRAWL_SECRETS_KEY, ../secrets), opened only to sign, and no query of the API returns it. `webhook_deliveries`: one row per (subscription, event) — or per
 * (subscription, batch of items) — with its state; `event_id` is the body's `id` and the
 * `Idempotency-Key`. `source_offset` orders a job's job events (they share one partition of
 * trawl.jobs). `webhook_jobs`: who owns a job, learnt from JobDispatched, so that the job's later
 * events find their subscriptions without waiting for a read model.
 */
export const WEBHOOK_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'webhook subscriptions, their deliveries, the owners of jobs',
    sql: `
      CREATE TABLE webhooks (
        id text PRIMARY KEY,
        user_id text NOT NULL,
        url text NOT NULL,
        events text[] NOT NULL,
        secret text NOT NULL,
        job_id text,
        schedule_id text,
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      );
      CREATE INDEX webhooks_user ON webhooks (user_id, created_at) WHERE deleted_at IS NULL;

      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES webhooks (id),
        event_id text NOT NULL,
        type text NOT NULL,
        job_id text,
        source_offset bigint,
        item_ids text[],
        body jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'retrying', 'delivered', 'failed', 'requested', 'sending')),
        attempts int NOT NULL DEFAULT 0,
        last_error text,
        last_status int,
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz
      );
      CREATE INDEX webhook_deliveries_page ON webhook_deliveries (webhook_id, created_at, id);
      CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, job_id, source_offset)
        WHERE source_offset IS NOT NULL AND status NOT IN ('delivered', 'failed');
      CREATE INDEX webhook_deliveries_items ON webhook_deliveries USING gin (item_ids) WHERE item_ids IS NOT NULL;
      CREATE INDEX webhook_deliveries_requested ON webhook_deliveries (updated_at) WHERE status IN ('requested', 'sending');

      CREATE TABLE webhook_jobs (
        job_id text PRIMARY KEY,
        user_id text NOT NULL,
        schedule_id text,
        created_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    id: 2,
    description: 'jobs without an owner (a seeded schedule) are known too, so their events are not retried as "owner not known yet"',
    sql: `ALTER TABLE webhook_jobs ALTER COLUMN user_id DROP NOT NULL;`,
  },
  {
    id: 3,
    description: "per-user webhook limits: each user's delivery attempts and test/re-delivery calls by minute (quotas/hourly-window.ts)",
    sql: `
      -- deliveries: what apps/services/webhooks sent or reserved to send (delivery-budget.ts);
      -- requests: POST /webhooks/:id/test and /redeliver calls (quotas/webhook-quota-guard.ts).
      CREATE TABLE webhook_usage (
        user_id text NOT NULL,
        minute timestamptz NOT NULL,
        deliveries int NOT NULL DEFAULT 0 CHECK (deliveries >= 0),
        requests int NOT NULL DEFAULT 0 CHECK (requests >= 0),
        PRIMARY KEY (user_id, minute)
      );
      CREATE INDEX webhook_usage_minute ON webhook_usage (minute);
    `,
  },
];
