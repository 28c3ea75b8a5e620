/**
 * The API's Prometheus metrics (served at `/metrics` by routes/operations.ts). One registry per
 * app instance (not prom-client's global one), so that tests can build several apps in one process
 * without "metric already registered".
 */
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { eventLoopSampleMs } from '@trawl/streams';

export interface ApiMetrics {
  readonly registry: Registry;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly crawls: Counter<'outcome'>;
  readonly feedClients: Gauge;
  readonly feedEvents: Counter<'outcome'>;
  readonly sseStreams: Gauge;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ApiMetrics;
  }
}

export function createMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'trawl_api_', eventLoopMonitoringPrecision: eventLoopSampleMs() });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'trawl_api_http_request_duration_seconds',
      help: 'HTTP request duration by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    crawls: new Counter({
      name: 'trawl_api_crawl_requests_total',
      help: 'POST /crawl outcomes: created, cached or scheduled',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    feedClients: new Gauge({ name: 'trawl_api_feed_clients', help: 'Open WebSocket feed connections', registers: [registry] }),
    feedEvents: new Counter({
      name: 'trawl_api_feed_events_total',
      help: 'Live feed deliveries: sent, or dropped for a slow client',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    sseStreams: new Gauge({ name: 'trawl_api_sse_streams', help: 'Open SSE log streams', registers: [registry] }),
  };
}

export default fp(
  async (fastify) => {
    const metrics = createMetrics();
    fastify.decorate('metrics', metrics);
    fastify.addHook('onResponse', async (request, reply) => {
      // The route template, not the URL: ids would explode the label space.
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.httpDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    });
  },
  { name: 'metrics', fastify: '5.x' },
);
