import type { FastifyPluginAsync } from 'fastify';
import { SpanKind, trace } from '@opentelemetry/api';
import { contextFromHeaders, eventAttributes, injectTraceHeaders, inSpan, trawlTracer } from '@trawl/streams';
import { crawlBodySchema, crawlQuerySchema, crawlResponses } from '../schemas/crawl.ts';
import type { CrawlBody } from '../crawl/submit-crawl.ts';

const crawlRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.post<{ Body: CrawlBody; Querystring: { ignore_cache?: boolean } }>(
    '/crawl',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags: ['crawl'],
        summary: 'Submit a crawl: now (deduplicated), at a time, or on a schedule',
        querystring: crawlQuerySchema,
        body: crawlBodySchema,
        response: crawlResponses,
      },
    },
    async (request, reply) => {
      // The crawl's trace: the caller's `traceparent` continued, or a new root; every event it
      // causes carries it on (the producer and consumers of @trawl/streams), and the answer names it.
      const parent = contextFromHeaders(request.headers as Record<string, string>);
      const span = trawlTracer().startSpan('POST /crawl', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'http.route': '/crawl' } }, parent);
      // `?ignore_cache=true` means what `ignore_cache: true` in the body means; the body wins.
      const ignoreCache = request.body.ignore_cache ?? request.query.ignore_cache;
      const body = ignoreCache === undefined ? request.body : { ...request.body, ignore_cache: ignoreCache };
      const outcome = await inSpan(span, parent, async () => {
        const submitted = await fastify.crawls.submit(request.userId, body);
        span.setAttributes(eventAttributes(submitted));
        return submitted;
      });
      const { traceparent } = injectTraceHeaders(trace.setSpan(parent, span), {});
      if (typeof traceparent === 'string') reply.header('traceparent', traceparent);
      if (outcome.scheduled) {
        fastify.metrics.crawls.inc({ outcome: 'scheduled' });
        return reply.code(202).send(outcome);
      }
      fastify.metrics.crawls.inc({ outcome: outcome.cached ? 'cached' : 'created' });
      return reply.code(200).send({ ...outcome, status_url: `/jobs/${outcome.job_id}/status`, logs_url: `/jobs/${outcome.job_id}/logs` });
    },
  );
};

export default crawlRoutes;
