/**
 * OpenAPI 3 generated from the route schemas, served at `/docs` (UI) and `/docs/json`.
 */
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

export default fp(
  async (fastify) => {
    await fastify.register(swagger, {
      // Shared schemas become components named by their `$id` (`Job`, `Schedule`…), the names a
      // generated client (@trawl/client) gives its types.
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      openapi: {
        openapi: '3.0.3',
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
    await fastify.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'openapi', fastify: '5.x' },
);
