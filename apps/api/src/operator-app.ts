/**
 * The operator port (`TRAWL_METRICS_HOST`:`TRAWL_METRICS_PORT`, off unless the port is set): the
 * operations endpoints — `/metrics`, `/healthz`, `/readyz` with every check — without an API key,
 * for Prometheus and orchestrators on a network only operators reach. The public port keeps
 * answering `/healthz`, a bare `/readyz`, and `/metrics` for a key.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { ReadinessChecks } from './health/readiness.ts';
import operationsRoutes from './routes/operations.ts';

export interface OperatorAppOptions {
  readonly registry: Registry;
  readonly checks: ReadinessChecks;
}

export async function buildOperatorApp(options: OperatorAppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  await app.register(operationsRoutes, { ...options, operator: true });
  return app;
}
