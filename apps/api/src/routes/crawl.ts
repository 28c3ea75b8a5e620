import type { FastifyPluginAsync } from 'fastify';
import { crawlBodySchema, crawlResponses } from '../schemas/crawl.ts';
import type { CrawlBody } from '../crawl/submit-crawl.ts';

const crawlRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.post<{ Body: CrawlBody }>(
    '/crawl',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags: ['crawl'],
        summary: 'Submit a crawl: now (deduplicated), at a time, or on a schedule',
        body: crawlBodySchema,
        response: crawlResponses,
      },
    },
    async (request, reply) => {
      const outcome = await fastify.crawls.submit(request.userId, request.body);
      if (outcome.scheduled) {
        fastify.metrics.crawls.inc({ outcome: 'scheduled' });
        return reply.code(202).send(outcome);
      }
      fastify.metrics.crawls.inc({ outcome: outcome.cached ? 'cached' : 'created' });
      return reply.code(200).send(outcome);
    },
  );
};

export default crawlRoutes;
