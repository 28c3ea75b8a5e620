/**
 * The operations endpoints: `/healthz` (the process answers; no dependency checked, so a Kafka
 * outage does not get every API instance restarted), `/readyz` (every dependency answers: take
 * me out of the load balancer otherwise) and `/metrics` (Prometheus).
 *
 * On the public port they tell strangers nothing: `/readyz` answers only ready or not (its status
 * code and `{status}`), with each dependency's check only for a valid API key; `/metrics` needs a
 * key. On the operator port (`TRAWL_METRICS_PORT`, operator-app.ts), which only operators reach,
 * all three answer in full without one. Dependency errors are redacted of credentials either way.
 *
 * `/healthz` and `/readyz` need no key, so they are limited per client address instead
 * (`TRAWL_API_HEALTH_RATE_LIMIT`, plugins/rate-limit.ts), and `/readyz` answers from a round of
 * checks at most `TRAWL_READY_CACHE_MS` old, one round in flight (streams' ReadinessCache): a
 * burst of probes costs the dependencies one round, not four calls each.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { ReadinessCache, type ReadinessChecks } from '../health/readiness.ts';
import { errorResponses } from '../schemas/common.ts';

const checkSchema = {
  type: 'object',
  required: ['ok', 'ms'],
  properties: { ok: { type: 'boolean' }, ms: { type: 'number' }, error: { type: 'string' } },
} as const;

const readySchema = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ready', 'unready'] },
    checks: { type: 'object', additionalProperties: checkSchema, description: "each dependency's check: with an API key, or on the operator port" },
  },
} as const;

export interface OperationsRoutesOptions {
  readonly checks: ReadinessChecks;
  readonly registry: Registry;
  /** The operator port: full answers without a key. */
  readonly operator?: boolean;
}

const operationsRoutes: FastifyPluginAsync<OperationsRoutesOptions> = async (fastify, { checks, registry, operator = false }) => {
  const readiness = new ReadinessCache(() => checks, { ttlMs: fastify.config.readyCacheMs });
  // The operator port's own listener has no client to limit (only operators reach it).
  const healthLimit = operator ? false : 'health';

  fastify.get(
    '/healthz',
    {
      config: { rateLimit: false },
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process answers',
        security: [],
        response: { 200: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } } },
      },
    },
    async () => ({ status: 'ok' }),
  );

  fastify.get(
    '/readyz',
    {
      config: { rateLimit: healthLimit },
      schema: {
        tags: ['operations'],
        summary: 'Readiness: Postgres, Kafka, the schema registry and ClickHouse answer (each check with an API key)',
        security: [],
        response: { ...(operator ? {} : errorResponses()), 200: readySchema, 503: readySchema },
      },
    },
    async (request, reply) => {
      const detailed = operator || (await fastify.identify(request, reply)) !== undefined;
      const results = await readiness.results({ stale: request.overHealthBudget === true });
      const ok = Object.values(results).every((r) => r.ok);
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unready', ...(detailed ? { checks: results } : {}) });
    },
  );

  fastify.get(
    '/metrics',
    {
      config: { rateLimit: false },
      ...(operator ? {} : { onRequest: fastify.authenticate }),
      schema: { hide: true },
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
};

export default operationsRoutes;
