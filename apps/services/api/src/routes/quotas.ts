/**
 * `GET /quotas`: the caller's quotas and what they use of them — what a QUOTA_EXCEEDED or
 * INTERVAL_TOO_SHORT refers to (apps/libs/store quotas/) — with the storage they keep against
 * `storage_bytes` (quotas/storage-usage.ts: past it, pages are crawled without content,
 * STORAGE_QUOTA_EXCEEDED) and how long the server keeps content at most.
 */
import type { FastifyPluginAsync } from 'fastify';
import { countLiveSchedules, inTransaction, quotaLimitsOf, readStorageUsage, readUsage } from '@trawl/store';
import { errorResponses } from '../schemas/common.ts';
import { readWebhookUsage, webhookQuotaLimitsOf } from '@trawl/store';

const limitsSchema = {
  type: 'object',
  required: ['active_jobs', 'pages_per_day', 'schedules', 'min_interval_seconds', 'storage_bytes', 'content_retention_max_seconds', 'content_retention_default_seconds'],
  properties: {
    active_jobs: { type: 'integer' },
    pages_per_day: { type: 'integer' },
    schedules: { type: 'integer' },
    min_interval_seconds: { type: 'integer' },
    storage_bytes: { type: 'integer', description: 'page content (bodies and formats, uncompressed) your jobs may keep; past it new pages are crawled without content (`STORAGE_QUOTA_EXCEEDED` in the job log)' },
    content_retention_max_seconds: { type: 'integer', description: "the longest any job's content is kept after it ends (`TRAWL_CONTENT_RETENTION_MAX_SECONDS`)" },
    content_retention_default_seconds: { type: 'integer', description: 'how long content is kept when a crawl names no `content_retention`' },
  },
} as const;

// Webhook limits (store quotas/webhook-quota-*.ts; the delivery budget: apps/services/webhooks).
const webhookLimits = {
  webhooks: { type: 'integer', description: 'webhooks you may have (active or not); past it `POST /webhooks` is 429 `QUOTA_EXCEEDED`' },
  webhook_tests_per_hour: { type: 'integer', description: '`POST /webhooks/:id/test` and `…/redeliver` calls in any hour; past it 429 `QUOTA_EXCEEDED` with `retry-after`' },
  webhook_deliveries_per_hour: { type: 'integer', description: "delivery attempts of your events' webhooks in any hour, retries included; past it deliveries wait (`last_error: held: …`) and go out as the hour frees room" },
} as const;
const webhookUsage = {
  webhooks: { type: 'integer', description: 'your webhooks not deleted' },
  webhook_tests_last_hour: { type: 'integer', description: 'test and re-delivery calls in the last hour (counted by the minute)' },
  webhook_deliveries_last_hour: { type: 'integer', description: 'delivery attempts in the last hour, with what a webhooks instance has reserved to send within seconds' },
} as const;

/** An object schema with more integer fields, each always present. */
function withFields(schema: { readonly type: string; readonly required: readonly string[]; readonly properties: object }, fields: Readonly<Record<string, object>>): object {
  return { ...schema, required: [...schema.required, ...Object.keys(fields)], properties: { ...schema.properties, ...fields } };
}

const quotasRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get(
    '/quotas',
    {
      schema: {
        tags: ['quotas'],
        summary: "The caller's quotas and their use",
        description:
          '`active_jobs`: jobs started and not over. `pages_today`: pages of the jobs started in the last 24 hours — a running ' +
          "job's whole `max_pages`, an ended job's real count. `schedules`: active and paused schedules. `storage_bytes`: the page " +
          'content your jobs keep (each page\'s body and formats, uncompressed; a body reused from the HTTP cache counts once, for the ' +
          'job that fetched it); content deleted, by retention or on request, no longer counts.',
        response: {
          200: {
            type: 'object',
            required: ['limits', 'usage'],
            properties: {
              limits: withFields(limitsSchema, webhookLimits),
              usage: withFields({
                type: 'object',
                required: ['active_jobs', 'pages_today', 'schedules', 'storage_bytes'],
                properties: { active_jobs: { type: 'integer' }, pages_today: { type: 'integer' }, schedules: { type: 'integer' }, storage_bytes: { type: 'integer' } },
              }, webhookUsage),
            },
          },
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const user = request.userId;
      const quotas = await inTransaction(fastify.db, async (tx) => {
        const limits = (await quotaLimitsOf(tx, [user], fastify.config.quotas)).get(user)!;
        const usage = (await readUsage(tx, [user])).get(user)!;
        const retention = fastify.config.contentRetention;
        return {
          limits: { ...limits, content_retention_max_seconds: retention.maxSeconds, content_retention_default_seconds: retention.defaultSeconds },
          usage: { ...usage, schedules: await countLiveSchedules(tx, user), storage_bytes: (await readStorageUsage(tx, [user])).get(user)! },
        };
      });
      const webhooks = {
        limits: (await webhookQuotaLimitsOf(fastify.db, [user], fastify.config.webhookQuotas)).get(user)!,
        usage: await readWebhookUsage(fastify.db, user),
      };
      return { limits: { ...quotas.limits, ...webhooks.limits }, usage: { ...quotas.usage, ...webhooks.usage } };
    },
  );
};

export default quotasRoutes;
