/**
 * `GET /quotas`: the caller's quotas and what they use of them — what a QUOTA_EXCEEDED or
 * INTERVAL_TOO_SHORT refers to (apps/libs/store quotas/).
 */
import type { FastifyPluginAsync } from 'fastify';
import { countLiveSchedules, inTransaction, quotaLimitsOf, readUsage } from '@trawl/store';
import { errorResponses } from '../schemas/common.ts';

const limitsSchema = {
  type: 'object',
  required: ['active_jobs', 'pages_per_day', 'schedules', 'min_interval_seconds'],
  properties: {
    active_jobs: { type: 'integer' },
    pages_per_day: { type: 'integer' },
    schedules: { type: 'integer' },
    min_interval_seconds: { type: 'integer' },
  },
} as const;

const quotasRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get(
    '/quotas',
    {
      schema: {
        tags: ['quotas'],
        summary: "The caller's quotas and their use",
        description:
          '`active_jobs`: jobs started and not over. `pages_today`: pages of the jobs started in the last 24 hours — a running ' +
          "job's whole `max_pages`, an ended job's real count. `schedules`: active and paused schedules.",
        response: {
          200: {
            type: 'object',
            required: ['limits', 'usage'],
            properties: {
              limits: limitsSchema,
              usage: {
                type: 'object',
                required: ['active_jobs', 'pages_today', 'schedules'],
                properties: { active_jobs: { type: 'integer' }, pages_today: { type: 'integer' }, schedules: { type: 'integer' } },
              },
            },
          },
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const user = request.userId;
      return inTransaction(fastify.db, async (tx) => {
        const limits = (await quotaLimitsOf(tx, [user], fastify.config.quotas)).get(user)!;
        const usage = (await readUsage(tx, [user])).get(user)!;
        return { limits, usage: { ...usage, schedules: await countLiveSchedules(tx, user) } };
      });
    },
  );
};

export default quotasRoutes;
