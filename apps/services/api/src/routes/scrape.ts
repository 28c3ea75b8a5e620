import type { FastifyPluginAsync } from 'fastify';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { mapBodySchema, mapResponses, scrapeBodySchema, scrapeResponses } from '../schemas/scrape.ts';
import { ScrapeService, type MapBody, type ScrapeBody } from '../scrape/scrape-service.ts';
import { ScrapeUrlCheck } from '../scrape/url-check.ts';

const scrapeRoutes: FastifyPluginAsync = async (fastify) => {
  const scrapes = new ScrapeService({
    crawls: fastify.crawls,
    waiters: fastify.liveFeed.waiters,
    pool: fastify.db,
    content: fastify.content,
    urls: new ScrapeUrlCheck(),
    config: fastify.config.scrape,
  });

  fastify.post<{ Body: ScrapeBody }>(
    '/scrape',
    {
      // Each scrape starts a crawl: it counts against the crawl budget.
      config: { rateLimit: 'crawl' },
      schema: {
        tags: ['crawl'],
        summary: 'Scrape one URL: a crawl of depth 0, answered with the page',
        description:
          'A job of one page through the pipeline (quotas, events, `GET /jobs/{id}`), answered as soon as the page is fetched or failed, with the formats asked for; `202` with the job when `timeout_ms` passes first. Never answered from an earlier job.',
        body: scrapeBodySchema,
        response: scrapeResponses,
      },
    },
    async (request, reply) => {
      const answer = await scrapes.scrape(request.userId, request.body, request.log);
      fastify.metrics.crawls.inc({ outcome: 'created' });
      return reply.code(answer.code).send(answer.body);
    },
  );

  fastify.get<{ Params: { id: string } }>(
    '/scrape/:id',
    {
      schema: {
        tags: ['crawl'],
        summary: "A scrape's result, from the read model",
        description: 'For a scrape answered `202`: its page with every format the job stored (`links` is null: the read model does not keep them); `202` again while the page has no outcome.',
        params: jobIdParams,
        response: { 200: scrapeResponses[200], 202: scrapeResponses[202], ...errorResponses('JOB_NOT_FOUND') },
      },
    },
    async (request, reply) => {
      const answer = await scrapes.result(request.userId, request.params.id);
      return reply.code(answer.code).send(answer.body);
    },
  );

  fastify.post<{ Body: MapBody }>(
    '/map',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags: ['crawl'],
        summary: "Map a site: its URLs from its sitemaps and its page's links",
        description:
          "A job of one page through the pipeline (the workers fetch; the API fetches nothing): the page's links kept by the crawl rules and the URLs of the site's sitemaps, filtered by `search`, at most `limit`. `202` with the job when `timeout_ms` passes first.",
        body: mapBodySchema,
        response: mapResponses,
      },
    },
    async (request, reply) => {
      const answer = await scrapes.map(request.userId, request.body, request.log);
      fastify.metrics.crawls.inc({ outcome: 'created' });
      return reply.code(answer.code).send(answer.body);
    },
  );
};

export default scrapeRoutes;
