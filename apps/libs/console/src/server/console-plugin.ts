/**
 * The web console as one Fastify plugin for apps/services/api: the page and its bundle at `/`, and the
 * routes behind its dashboards — scrape metrics from ClickHouse, consumer lag, dead letters and
 * their re-drive, `/me` — behind the API's key authentication, each scoped to the key's user.
 *
 * It uses the API's `db` (Postgres: job ownership, the dead-letter read model, the re-drive log)
 * and `authenticate`; everything else is created on first use (see console-services.ts).
 */
import fp from 'fastify-plugin';
import './host-app.ts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger, RawMessage } from '@trawl/streams';
import { ConsoleAssets } from './assets/console-assets.ts';
import { ConsoleServices, type ConsoleOptions } from './console-services.ts';
import { loadDashboardQueries, type DashboardQuery } from './dashboards/dashboard-files.ts';
import { RedriveLog } from './dead-letters/redrive-log.ts';
import { ConsoleError } from './errors.ts';
import assetRoutes from './routes/assets.ts';
import consumerLagRoutes, { lagReportSchema } from './routes/consumer-lag.ts';
import deadLetterRoutes, { deadLetterView } from './routes/dead-letters.ts';
import meRoutes from './routes/me.ts';
import scrapeMetricsRoutes, { scrapeMetricsResponse } from './routes/scrape-metrics.ts';

export type { ConsoleOptions } from './console-services.ts';

export default fp<ConsoleOptions>(
  async (fastify, options) => {
    // The API's producer (an EventProducer in production) can forward raw bytes: no second connection.
    const apiProducer = (fastify as unknown as { producer?: { sendRaw?: (m: RawMessage) => Promise<void> } }).producer;
    const services = new ConsoleServices(options, fastify.log as unknown as Logger, apiProducer);
    const assets = new ConsoleAssets(options.distDir);
    let queries: ReadonlyMap<string, DashboardQuery> | undefined;
    const redrives = new RedriveLog(fastify.db);

    await fastify.register(assetRoutes, { assets });

    await fastify.register(async (api) => {
      api.addHook('onRequest', fastify.authenticate);
      // Named components of the OpenAPI document, where @trawl/client takes the console's types from.
      for (const schema of [deadLetterView, scrapeMetricsResponse, lagReportSchema]) api.addSchema(schema);
      // Console errors answer in the API's shape; anything else goes on to the API's handler.
      api.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
        if (!(err instanceof ConsoleError)) throw err;
        if (err.statusCode >= 500) request.log.warn({ err }, err.message);
        return reply.code(err.statusCode).type('application/json; charset=utf-8').send(err.toBody());
      });
      await api.register(meRoutes);
      // Read at first use: a missing or broken SQL file fails the dashboard, not the API's start.
      await api.register(scrapeMetricsRoutes, { services, queries: () => (queries ??= loadDashboardQueries()) });
      await api.register(consumerLagRoutes, { services });
      await api.register(deadLetterRoutes, { services, redrives });
    });

    fastify.addHook('onClose', async () => services.close());
  },
  { name: 'console', dependencies: ['dependencies', 'auth'], fastify: '5.x' },
);
