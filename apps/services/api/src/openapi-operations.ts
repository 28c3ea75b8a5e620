/**
 * What the OpenAPI document gets beyond the route schemas (plugins/openapi.ts applies it as
 * @fastify/swagger's `transformObject`, and gives it `servers` from serversOf): every operation's
 * `operationId`, and the error answers the framework gives to any route with a body.
 *
 * The names live here, in one table, not in each route: generated clients name their methods
 * after them (`createCrawl`, `listJobPages`), so they are chosen once, read together and never
 * derived from paths (`jobsIdPagesFetchIdContentGet`). A new route adds its line here (or an
 * `operationId` of its own in its schema, which is kept); one without a name fails the OpenAPI
 * check (`npm run openapi:check -w @trawl/api`, run by `npm run lint`) and its test.
 */
import type { ApiConfig } from './config.ts';

export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /healthz': 'getLiveness',
  'GET /readyz': 'getReadiness',

  'POST /crawl': 'createCrawl',
  'POST /scrape': 'scrapeUrl',
  'GET /scrape/{id}': 'getScrape',
  'POST /map': 'mapSite',

  'GET /jobs': 'listJobs',
  'GET /jobs/{id}/status': 'getJobStatus',
  'POST /jobs/{id}/cancel': 'cancelJob',
  'POST /jobs/{id}/pause': 'pauseJob',
  'POST /jobs/{id}/resume': 'resumeJob',
  'POST /jobs/{id}/retry-failed': 'retryFailedPages',
  'POST /jobs/{id}/reextract': 'reextractJob',
  'GET /jobs/{id}/pages': 'listJobPages',
  'GET /jobs/{id}/pages/{fetch_id}/content': 'getPageContent',
  'GET /jobs/{id}/pages/{fetch_id}/downloads/{sha256}': 'getPageDownload',
  'DELETE /jobs/{id}/content': 'deleteJobContent',
  'GET /jobs/{id}/items': 'listJobItems',
  'GET /jobs/{id}/changes': 'getJobChanges',
  'GET /jobs/{id}/logs': 'streamJobLogs',
  'GET /events': 'openLiveFeed',

  'GET /schedules': 'listSchedules',
  'POST /schedules': 'createSchedule',
  'GET /schedules/{id}': 'getSchedule',
  'PATCH /schedules/{id}': 'updateSchedule',
  'GET /schedules/{id}/jobs': 'listScheduleJobs',
  'POST /schedules/{id}/pause': 'pauseSchedule',
  'POST /schedules/{id}/resume': 'resumeSchedule',
  'POST /schedules/{id}/cancel': 'cancelSchedule',

  'GET /quotas': 'getQuotas',

  'GET /websites': 'listWebsites',
  'POST /websites': 'createWebsite',
  'GET /websites/{id}': 'getWebsite',
  'PUT /websites/{id}': 'replaceWebsite',
  'DELETE /websites/{id}': 'deleteWebsite',

  'GET /targets': 'listTargets',
  'POST /targets': 'createTarget',
  'GET /targets/{id}': 'getTarget',
  'PUT /targets/{id}': 'replaceTarget',
  'DELETE /targets/{id}': 'deleteTarget',

  'POST /webhooks': 'createWebhook',
  'GET /webhooks': 'listWebhooks',
  'GET /webhooks/{id}': 'getWebhook',
  'PATCH /webhooks/{id}': 'updateWebhook',
  'DELETE /webhooks/{id}': 'deleteWebhook',
  'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'POST /webhooks/{id}/deliveries/{delivery_id}/redeliver': 'redeliverWebhookDelivery',
  'POST /webhooks/{id}/test': 'testWebhook',

  'POST /secrets': 'putSecret',
  'GET /secrets': 'listSecrets',
  'DELETE /secrets/{name}': 'deleteSecret',

  // The console's routes (apps/libs/console), mounted by the service.
  'GET /me': 'getCurrentUser',
  'GET /metrics/scrape': 'getScrapeMetrics',
  'GET /metrics/lag': 'getConsumerLag',
  'GET /dead-letters': 'listDeadLetters',
  'POST /dead-letters/{id}/redrive': 'redriveDeadLetter',
};

/** Tags used by routes outside this package's own list (plugins/openapi.ts), declared so every tag is described. */
export const EXTRA_TAGS = [
  { name: 'secrets', description: 'Per-user secrets that credentials name as `{"secret": "<name>"}`: stored sealed, never answered' },
  { name: 'console', description: "The web console's own reads: the caller, scrape metrics, consumer lag, dead letters" },
] as const;

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** The framework's refusals of a body, which any route that takes one can answer (plugins/error-handler.ts). */
const BODY_ERRORS: Readonly<Record<string, string>> = { 413: 'BODY_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

/**
 * `servers`: `TRAWL_API_PUBLIC_URL` (a comma list), else this instance's own address, a wildcard
 * host read as the loopback (the address a browser on the same machine uses).
 */
export function serversOf(config: Pick<ApiConfig, 'publicUrl' | 'host' | 'port'>): { url: string; description: string }[] {
  const urls = config.publicUrl.split(',').map((u) => u.trim().replace(/\/+$/, '')).filter(Boolean);
  if (urls.length > 0) return urls.map((url) => ({ url, description: 'this Trawl API (TRAWL_API_PUBLIC_URL)' }));
  const host = config.host === '0.0.0.0' || config.host === '::' || config.host === '' ? '127.0.0.1' : config.host;
  const hostname = host.includes(':') ? `[${host}]` : host;
  return [{ url: `http://${hostname}:${config.port}`, description: 'this Trawl API, where it listens (set TRAWL_API_PUBLIC_URL to name its public address)' }];
}

type Json = Record<string, unknown>;

/**
 * Completes the generated document in place: operation ids from OPERATION_IDS (an id a route
 * set itself is kept), 413/415 on every operation with a body, the extra tags.
 * It never throws, so `/docs` answers whatever a route forgot; the OpenAPI check reports it.
 */
export function completeDocument(doc: Json): Json {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || typeof operation !== 'object' || operation === null) continue;
      const op = operation as Json;
      const id = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
      if (op.operationId === undefined && id !== undefined) op.operationId = id;
      const responses = (op.responses ?? {}) as Record<string, unknown>;
      if (op.requestBody !== undefined) {
        for (const [status, code] of Object.entries(BODY_ERRORS)) {
          responses[status] ??= { description: code, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } };
        }
      }
    }
  }
  const tags = (doc.tags ?? []) as { name: string }[];
  doc.tags = [...tags, ...EXTRA_TAGS.filter((t) => !tags.some((have) => have.name === t.name))];
  return doc;
}
