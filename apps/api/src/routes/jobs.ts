import type { FastifyPluginAsync } from 'fastify';
import { eventId } from '@trawl/streams';
import { findJob, isTerminal, listJobs, type JobStatus } from '../data/jobs.ts';
import { ApiError, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { toJobView } from '../http/job-view.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { jobListQuery } from '../schemas/jobs.ts';

interface ListQuery {
  status?: string;
  schedule_id?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
}

const jobsRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get<{ Querystring: ListQuery }>(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        summary: "The caller's jobs, newest first",
        querystring: jobListQuery,
        response: {
          200: {
            type: 'object',
            properties: {
              jobs: { type: 'array', items: { $ref: 'Job#' } },
              next_cursor: { type: ['string', 'null'] },
            },
          },
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const after = decodeCursor(q.cursor);
      const rows = await listJobs(fastify.db, {
        userId: request.userId,
        limit: q.limit,
        ...(q.status ? { statuses: q.status.split(',') as JobStatus[] } : {}),
        ...(q.schedule_id ? { scheduleId: q.schedule_id } : {}),
        ...(q.since ? { since: new Date(q.since) } : {}),
        ...(q.until ? { until: new Date(q.until) } : {}),
        ...(after ? { after: { sortAt: after.at, jobId: after.id } } : {}),
      });
      const last = rows[rows.length - 1];
      return {
        jobs: rows.map((r) => toJobView(r)),
        next_cursor: rows.length === q.limit && last ? encodeCursor(last.sort_at, last.job_id) : null,
      };
    },
  );

  fastify.get<{ Params: { id: string } }>(
    '/jobs/:id/status',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Status, counters and timings of a job',
        params: jobIdParams,
        response: { 200: { $ref: 'Job#' }, ...errorResponses('JOB_NOT_FOUND') },
      },
    },
    async (request) => {
      const job = await findJob(fastify.db, request.params.id, request.userId);
      if (!job) throw notFound('JOB_NOT_FOUND', request.params.id);
      return toJobView(job);
    },
  );

  fastify.post<{ Params: { id: string } }>(
    '/jobs/:id/cancel',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Cancel a job: the frontier drops its outstanding fetches and completes it as cancelled',
        params: jobIdParams,
        response: {
          202: { type: 'object', properties: { job_id: { type: 'string' }, status: { type: 'string', enum: ['cancelling'] } } },
          ...errorResponses('JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED'),
        },
      },
    },
    async (request, reply) => {
      const job = await findJob(fastify.db, request.params.id, request.userId);
      if (!job) throw notFound('JOB_NOT_FOUND', request.params.id);
      if (isTerminal(job.status)) throw new ApiError('JOB_ALREADY_FINISHED', `job ${job.job_id} is already ${job.status}`);
      try {
        // One cancellation per job: asking twice yields the same event id, absorbed downstream.
        await fastify.producer.emit(
          'JobCancelled',
          { job_id: job.job_id, user_id: request.userId, reason: 'cancelled by the user' },
          { eventId: eventId('JobCancelled', job.job_id), key: job.job_id },
        );
      } catch (err) {
        throw new ApiError('DEPENDENCY_UNAVAILABLE', 'could not publish the cancellation to Kafka; retry later', { cause: err });
      }
      return reply.code(202).send({ job_id: job.job_id, status: 'cancelling' });
    },
  );
};

export default jobsRoutes;
