import type { FastifyPluginAsync } from 'fastify';
import { findJob } from '../data/jobs.ts';
import { listPages } from '../data/job-pages.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { pageListQuery, pageSchema } from '../schemas/jobs.ts';

const jobPagesRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get<{ Params: { id: string }; Querystring: { ok?: boolean; limit: number; cursor?: string } }>(
    '/jobs/:id/pages',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Pages fetched or failed by a job, in fetch order',
        params: jobIdParams,
        querystring: pageListQuery,
        response: {
          200: {
            type: 'object',
            properties: { pages: { type: 'array', items: pageSchema }, next_cursor: { type: ['string', 'null'] } },
          },
          ...errorResponses('JOB_NOT_FOUND'),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      const { ok, limit, cursor } = request.query;
      const after = decodeCursor(cursor);
      const pages = await listPages(fastify.db, { jobId: id, limit, ...(ok === undefined ? {} : { ok }), ...(after ? { after } : {}) });
      const last = pages[pages.length - 1];
      return { pages, next_cursor: pages.length === limit && last ? encodeCursor(last.sort_at, last.fetch_id) : null };
    },
  );
};

export default jobPagesRoutes;
