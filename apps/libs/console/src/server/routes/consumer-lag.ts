/**
 * `GET /metrics/lag`: consumer lag per group. Operational, not per user — it names groups and
 * counts, no job or URL — so every signed-in user sees it. Kafka unreachable is an answer too
 * (`available: false` and why), so the dashboard can say so instead of failing.
 */
import '../host-app.ts';
import type { FastifyPluginAsync } from 'fastify';
import { consumerLag, type GroupLag } from '../lag/consumer-lag.ts';
import type { ConsoleServices } from '../console-services.ts';
import { errorResponses } from './error-responses.ts';

const LAG_CACHE_MS = 5000;

/** The lag answer (a shared schema: `LagReport` in the OpenAPI document). */
export const lagReportSchema = {
  $id: 'LagReport',
  type: 'object',
  required: ['available', 'measured_at', 'groups'],
  properties: {
    available: { type: 'boolean' },
    reason: { type: 'string', description: 'why Kafka could not be asked (with `available: false`)' },
    measured_at: { type: 'string' },
    took_ms: { type: 'number' },
    groups: {
      type: 'array',
      items: {
        type: 'object',
        required: ['group', 'kind', 'state', 'members', 'lag', 'topics'],
        properties: {
          group: { type: 'string' },
          kind: { type: 'string', enum: ['consumer-group', 'projection'] },
          state: { type: ['string', 'null'] },
          members: { type: ['integer', 'null'] },
          lag: { type: 'integer' },
          topics: {
            type: 'array',
            items: { type: 'object', required: ['topic', 'lag', 'partitions'], properties: { topic: { type: 'string' }, lag: { type: 'integer' }, partitions: { type: 'integer' } } },
          },
        },
      },
    },
  },
} as const;

const consumerLagRoutes: FastifyPluginAsync<{ services: ConsoleServices }> = async (fastify, { services }) => {
  let cached: { at: number; body: object } | undefined;
  let pending: Promise<object> | undefined;

  async function measure(): Promise<object> {
    const started = performance.now();
    try {
      const groups: GroupLag[] = await consumerLag(services.kafka(), fastify.db, services.lagTopics);
      return { available: true, measured_at: new Date().toISOString(), took_ms: Math.round(performance.now() - started), groups };
    } catch (err) {
      return { available: false, reason: `Kafka did not answer: ${(err as Error).message}`, measured_at: new Date().toISOString(), groups: [] };
    }
  }

  fastify.get(
    '/metrics/lag',
    {
      schema: {
        tags: ['console'],
        summary: 'Consumer lag per group (Kafka committed offsets) and per projection (Postgres stream_offsets)',
        response: { 200: { $ref: 'LagReport#' }, ...errorResponses },
      },
    },
    async () => {
      if (cached && Date.now() - cached.at < LAG_CACHE_MS) return cached.body;
      pending ??= measure().finally(() => (pending = undefined));
      const body = await pending;
      cached = { at: Date.now(), body };
      return body;
    },
  );
};

export default consumerLagRoutes;
