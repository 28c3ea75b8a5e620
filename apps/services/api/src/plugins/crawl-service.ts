import fp from 'fastify-plugin';
import { CrawlService } from '../crawl/submit-crawl.ts';

declare module 'fastify' {
  interface FastifyInstance {
    crawls: CrawlService;
  }
}

export default fp(
  async (fastify) => {
    fastify.decorate(
      'crawls',
      new CrawlService({
        pool: fastify.db,
        producer: fastify.producer,
        dedupeTtlSeconds: fastify.config.dedupeTtlSeconds,
        quotas: fastify.config.quotas,
        maxContentRetentionSeconds: fastify.config.contentRetention.maxSeconds,
        secrets: () => fastify.secrets,
      }),
    );
  },
  { name: 'crawl-service', dependencies: ['dependencies'], fastify: '5.x' },
);
