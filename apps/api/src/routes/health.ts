/**
 * `/healthz`: the process answers (liveness; no dependency checked, so a Kafka outage does not get
 * every API instance restarted). `/readyz`: every dependency answers (take me out of the load
 * balancer otherwise).
 */
import type { FastifyPluginAsync } from 'fastify';
import { runChecks, type ReadinessChecks } from '../health/readiness.ts';

const checkSchema = {
  type: 'object',
  properties: { ok: { type: 'boolean' }, ms: { type: 'number' }, error: { type: 'string' } },
} as const;

const readySchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ready', 'unready'] },
    checks: { type: 'object', additionalProperties: checkSchema },
  },
} as const;

export interface HealthRoutesOptions {
  readonly checks: ReadinessChecks;
}

const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (fastify, { checks }) => {
  fastify.get(
    '/healthz',
    {
      config: { rateLimit: false },
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process answers',
        security: [],
        response: { 200: { type: 'object', properties: { status: { type: 'string' } } } },
      },
    },
    async () => ({ status: 'ok' }),
  );
  fastify.get(
    '/readyz',
    {
      config: { rateLimit: false },
      schema: {
        tags: ['operations'],
        summary: 'Readiness: Postgres, Kafka, the schema registry and ClickHouse answer',
        security: [],
        response: { 200: readySchema, 503: readySchema },
      },
    },
    async (_request, reply) => {
      const results = await runChecks(checks);
      const ok = Object.values(results).every((r) => r.ok);
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unready', checks: results });
    },
  );
};

export default healthRoutes;
