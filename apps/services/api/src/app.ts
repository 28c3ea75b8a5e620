/**
 * The app factory. Everything outside the process (Postgres, the producer, the live subscription,
 * readiness checks) comes in through `AppDeps`, so tests build the very app main.ts runs, against
 * the real stack, and drive it with `inject` or a real socket.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import websocket from '@fastify/websocket';
import type { EventProducer, Logger } from '@trawl/streams';
import type { Pool } from '@trawl/store';
import type { SecretBox } from '@trawl/store/secrets';
import { DEFAULT_CONFIG, type ApiConfig } from './config.ts';
import type { LiveSubscribe } from './feed/feed-event.ts';
import type { ReadinessChecks } from './health/readiness.ts';
import { createValidatorCompiler } from './http/validators.ts';
import auth from './plugins/auth.ts';
import crawlService from './plugins/crawl-service.ts';
import type { ContentStore } from '@trawl/content';
import dependencies from './plugins/dependencies.ts';
import errorHandler, { frameworkErrors } from './plugins/error-handler.ts';
import jobLogs from './plugins/job-logs.ts';
import liveFeed from './plugins/live-feed.ts';
import metrics from './plugins/metrics.ts';
import openapi from './plugins/openapi.ts';
import rateLimit from './plugins/rate-limit.ts';
import crawlRoutes from './routes/crawl.ts';
import eventsFeedRoutes from './routes/events-feed.ts';
import operationsRoutes from './routes/operations.ts';
import jobChangesRoutes from './routes/job-changes.ts';
import jobReextractRoutes from './routes/job-reextract.ts';
import jobItemsRoutes from './routes/job-items.ts';
import jobLogsRoutes from './routes/job-logs.ts';
import jobPagesRoutes from './routes/job-pages.ts';
import jobsRoutes from './routes/jobs.ts';
import quotasRoutes from './routes/quotas.ts';
import schedulesRoutes from './routes/schedules.ts';
import scrapeRoutes from './routes/scrape.ts';
import firecrawlRoutes from './routes/firecrawl.ts';
import secretsRoutes from './routes/secrets.ts';
import targetsRoutes from './routes/targets.ts';
import webhooksRoutes from './routes/webhooks.ts';
import websitesRoutes from './routes/websites.ts';
import { errorResponseSchema } from './schemas/common.ts';
import { scheduleViewSchema, targetViewSchema, websiteViewSchema } from './schemas/configuration.ts';
import { itemChangeSchema, jobChangesSchema, pageChangeSchema } from './schemas/changes.ts';
import { crawlAcceptedSchema, crawlScheduledSchema } from './schemas/crawl.ts';
import { scrapePendingSchema, scrapeResultSchema } from './schemas/scrape.ts';
import { itemSchema, jobViewSchema, pageSchema } from './schemas/jobs.ts';
import { deliveryView, webhookView } from './schemas/webhooks.ts';
import { secretView } from './schemas/secrets.ts';

export interface AppDeps {
  readonly pool: Pool;
  readonly producer: Pick<EventProducer, 'emit'>;
  /** The live subscription behind `/events` (streams' `subscribeLive`); without it the feed answers 503. */
  readonly subscribeLive?: LiveSubscribe;
  /** `/readyz` checks; Postgres alone when absent. */
  readonly readiness?: ReadinessChecks;
  readonly config?: Partial<ApiConfig>;
  /** The content store; default: the one TRAWL_S3_URL names. */
  readonly content?: ContentStore;
  /** A pino logger (the service's), or Fastify's logger option; silent by default. */
  readonly logger?: Logger | FastifyServerOptions['logger'];
  /**
   * Where API keys come from: `postgres` (default: the pool's `api_keys`, indexed in memory and
   * listened to) or `none` — no key is valid and nothing connects (the offline OpenAPI build).
   */
  readonly apiKeys?: 'postgres' | 'none';
  /** Seals webhook secrets; default: the keys of TRAWL_SECRETS_KEY (plugins/dependencies.ts). */
  readonly secrets?: SecretBox;
  /**
   * Registers more on the same app after the API's own routes (main.ts mounts the web console
   * this way), so the API's factory depends on no user interface.
   */
  readonly mount?: (app: FastifyInstance) => PromiseLike<unknown>;
}

/** Keeps `?access_token=` out of request logs. */
function redactUrl(url: string): string {
  return url.replace(/([?&]access_token=)[^&]*/g, '$1[redacted]');
}

function isPino(logger: AppDeps['logger']): logger is Logger {
  return typeof logger === 'object' && logger !== null && typeof (logger as Logger).child === 'function' && 'levels' in logger;
}

/** The readiness checks of an app: the given ones, else Postgres alone. */
export function readinessOf(deps: Pick<AppDeps, 'readiness' | 'pool'>): ReadinessChecks {
  return deps.readiness ?? { postgres: async () => void (await deps.pool.query('SELECT 1')) };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const config: ApiConfig = { ...DEFAULT_CONFIG, ...deps.config };
  const serializers = { req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: redactUrl(req.url), id: req.id }) };
  const app = Fastify({
    ...(isPino(deps.logger) ? { loggerInstance: deps.logger.child({ component: 'http' }, { serializers }) } : { logger: deps.logger ?? false }),
    bodyLimit: config.bodyLimit,
    // Ids of our own, not sequential numbers: they are logged and returned in x-request-id.
    genReqId: () => crypto.randomUUID(),
    requestIdHeader: false,
    // SSE and WebSocket connections are long-lived; `close()` ends them through their own hooks.
    forceCloseConnections: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors,
    // A hop count is one of Fastify's documented forms; its types leave it out.
    trustProxy: config.trustProxy as boolean | string,
  }) as unknown as FastifyInstance;
  app.setValidatorCompiler(createValidatorCompiler());
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Every answer is the type it says: JSON or text naming a user's URL is never sniffed as HTML.
    reply.header('x-content-type-options', 'nosniff');
  });

  // Shared schemas: referenced as `Job#` and so on, and the OpenAPI document's named components.
  const shared = [errorResponseSchema, jobViewSchema, pageSchema, itemSchema, crawlAcceptedSchema, crawlScheduledSchema, scheduleViewSchema, websiteViewSchema, targetViewSchema, webhookView, deliveryView, secretView, pageChangeSchema, itemChangeSchema, jobChangesSchema, scrapeResultSchema, scrapePendingSchema];
  for (const schema of shared) app.addSchema(schema);

  await app.register(dependencies, { pool: deps.pool, producer: deps.producer, config, ...(deps.content ? { content: deps.content } : {}), ...(deps.secrets ? { secrets: deps.secrets } : {}) });
  await app.register(errorHandler);
  await app.register(metrics);
  await app.register(openapi);
  await app.register(rateLimit);
  await app.register(auth, { keys: deps.apiKeys ?? 'postgres' });
  await app.register(crawlService);
  await app.register(jobLogs);
  await app.register(liveFeed, deps.subscribeLive ? { subscribe: deps.subscribeLive } : {});
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });

  await app.register(operationsRoutes, { checks: readinessOf(deps), registry: app.metrics.registry });

  // Everything below needs an API key; the user id scopes every query.
  await app.register(async (api) => {
    api.addHook('onRequest', api.authenticate);
    await api.register(crawlRoutes);
    await api.register(scrapeRoutes);
    await api.register(firecrawlRoutes);
    await api.register(jobsRoutes);
    await api.register(jobPagesRoutes);
    await api.register(jobItemsRoutes);
    await api.register(jobChangesRoutes);
    await api.register(jobReextractRoutes);
    await api.register(jobLogsRoutes);
    await api.register(eventsFeedRoutes);
    await api.register(schedulesRoutes);
    await api.register(quotasRoutes);
    await api.register(websitesRoutes);
    await api.register(targetsRoutes);
    await api.register(webhooksRoutes);
    await api.register(secretsRoutes);
  });

  if (deps.mount) await deps.mount(app);

  return app;
}
