/**
 * OpenAPI 3 generated from the route schemas, served at `/docs` (UI) and `/docs/json`.
 *
 * The UI is served from the console's origin, so it gets a content security policy of its own: its
 * scripts, styles and images from `/docs/static` alone (no inline script, no eval, nothing from
 * elsewhere: not the swagger.io validator badge, not a remote spec), "Try it out" calls to this
 * origin, and no framing. Swagger UI sets its other styles through the DOM, which a policy does
 * not govern, and needs nothing more (checked in headless Chromium: the UI renders, "Try it out"
 * answers, and no violation is reported).
 */
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { completeDocument, serversOf } from '../openapi-operations.ts';

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // The one inline <style> of Swagger UI: its own logo's (the swagger-ui-standalone-preset's
  // `logo_small`), drawn for a moment before the plugin puts Fastify's in its place.
  "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export default fp(
  async (fastify) => {
    await fastify.register(swagger, {
      // Shared schemas become components named by their `$id` (`Job`, `Schedule`…), the names a
      // generated client (@trawl/client) gives its types.
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      // Operation ids and the framework's own error answers (openapi-operations.ts).
      transformObject: (document) => ('openapiObject' in document ? completeDocument(document.openapiObject as Record<string, unknown>) : document.swaggerObject),
      openapi: {
        // 3.1: its schemas are JSON Schema 2020-12, so the route schemas (Ajv's JSON Schema) are
        // the document as they are, `propertyNames` and `type: [x, 'null']` included; in 3.0 they
        // are not valid. Checked by `npm run openapi:check` (swagger-parser and Redocly).
        openapi: '3.1.0',
        servers: serversOf(fastify.config),
        info: {
          title: 'Trawl API',
          version: '0.1.0',
          description:
            'Submit crawls (now, at a time, or on a schedule), follow them (status, pages, items, SSE logs, WebSocket live feed), ' +
            'and manage websites, targets and schedules. Every error is `{error:{code,message,field?}}`; the codes are listed in the README.',
        },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'an API key: `trawl keys create <user>`' } } },
        security: [{ bearer: [] }],
        tags: [
          { name: 'crawl', description: 'Submit crawls' },
          { name: 'jobs', description: 'Follow and cancel jobs' },
          { name: 'schedules', description: 'Scheduled and periodic crawls' },
          { name: 'websites', description: 'How to crawl and scrape a site (a "spider")' },
          { name: 'targets', description: 'Scrape targets: a website plus a search' },
          { name: 'live', description: 'The WebSocket live feed' },
          { name: 'quotas', description: "The caller's quotas and their use" },
          { name: 'webhooks', description: 'Signed deliveries of job and item events to your URLs (apps/services/webhooks), their history and re-delivery' },
          { name: 'operations', description: 'Health, readiness, metrics' },
        ],
      },
    });
    await fastify.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP });
  },
  { name: 'openapi', fastify: '5.x' },
);
