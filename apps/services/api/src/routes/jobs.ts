import type { FastifyPluginAsync } from 'fastify';
import { eventId } from '@trawl/streams';
import { findJob, isTerminal, listJobs, throttleSettings } from '../data/jobs.ts';
import { ApiError, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { statusCounters, toJobView } from '../http/job-view.ts';
import { failedUrls, nearDuplicatePageCount } from '../data/job-pages.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { jobListQuery, statusFilter } from '../schemas/jobs.ts';
import { crawlResponses } from '../schemas/crawl.ts';

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
            required: ['jobs', 'next_cursor'],
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
        ...(q.status ? { statuses: statusFilter(q.status) } : {}),
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
      const view = toJobView(job);
      const [throttle, nearDuplicates] = await Promise.all([throttleSettings(fastify.db, job.job_id), nearDuplicatePageCount(fastify.db, job.job_id)]);
      return { ...view, counters: { ...view.counters, ...statusCounters(job), near_duplicates: nearDuplicates }, throttle };
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
          202: { type: 'object', required: ['job_id', 'status'], properties: { job_id: { type: 'string' }, status: { type: 'string', enum: ['cancelling'] } } },
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

  for (const action of ['pause', 'resume'] as const) {
    const pausing = action === 'pause';
    fastify.post<{ Params: { id: string } }>(
      `/jobs/:id/${action}`,
      {
        schema: {
          tags: ['jobs'],
          summary: pausing
            ? 'Pause a job: the frontier issues no new fetches (those already requested complete) and keeps its state, across restarts'
            : 'Resume a paused job: the frontier requests what it held back; the fetch deadline counts from here',
          params: jobIdParams,
          response: {
            202: { type: 'object', required: ['job_id', 'status'], properties: { job_id: { type: 'string' }, status: { type: 'string', enum: [pausing ? 'pausing' : 'resuming'] } } },
            ...errorResponses('JOB_NOT_FOUND', 'JOB_ALREADY_FINISHED', 'JOB_NOT_PAUSABLE'),
          },
        },
      },
      async (request, reply) => {
        const job = await findJob(fastify.db, request.params.id, request.userId);
        if (!job) throw notFound('JOB_NOT_FOUND', request.params.id);
        if (isTerminal(job.status)) throw new ApiError('JOB_ALREADY_FINISHED', `job ${job.job_id} is already ${job.status}`);
        // The read model may lag a pause by a moment; the frontier absorbs a repeated one either way.
        if (pausing && job.status === 'paused') throw new ApiError('JOB_NOT_PAUSABLE', `job ${job.job_id} is already paused`);
        if (!pausing && job.status !== 'paused') throw new ApiError('JOB_NOT_PAUSABLE', `job ${job.job_id} is not paused (it is ${job.status})`);
        try {
          // Each pause and resume is an event of its own (a job may be paused again after a resume).
          if (pausing) await fastify.producer.emit('JobPaused', { job_id: job.job_id, user_id: request.userId, reason: 'paused by the user' }, { key: job.job_id });
          else await fastify.producer.emit('JobResumed', { job_id: job.job_id, user_id: request.userId }, { key: job.job_id });
        } catch (err) {
          throw new ApiError('DEPENDENCY_UNAVAILABLE', `could not publish the ${action} to Kafka; retry later`, { cause: err });
        }
        return reply.code(202).send({ job_id: job.job_id, status: pausing ? 'pausing' : 'resuming' });
      },
    );
  }

  fastify.post<{ Params: { id: string } }>(
    '/jobs/:id/retry-failed',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags: ['jobs'],
        summary: "A new job over a finished job's failed pages (depth 0, same spider and params), linked by `retry_of`",
        params: jobIdParams,
        response: {
          200: crawlResponses[200],
          ...errorResponses('JOB_NOT_FOUND', 'JOB_NOT_FINISHED', 'NO_FAILED_PAGES', 'QUOTA_EXCEEDED', 'UNKNOWN_SPIDER'),
        },
      },
    },
    async (request, reply) => {
      const job = await findJob(fastify.db, request.params.id, request.userId);
      if (!job) throw notFound('JOB_NOT_FOUND', request.params.id);
      if (!isTerminal(job.status)) throw new ApiError('JOB_NOT_FINISHED', `job ${job.job_id} is still ${job.status}; retry its failed pages once it has ended`);
      const urls = await failedUrls(fastify.db, job.job_id, MAX_RETRY_URLS);
      if (urls.length === 0) throw new ApiError('NO_FAILED_PAGES', `job ${job.job_id} has no failed pages`);
      const outcome = await fastify.crawls.retryFailed(request.userId, { job_id: job.job_id, spider: job.spider, params: job.params ?? {} }, urls);
      if (outcome.scheduled) throw new Error('a retry is never scheduled');
      return reply.code(200).send({ ...outcome, retry_of: job.job_id, status_url: `/jobs/${outcome.job_id}/status`, logs_url: `/jobs/${outcome.job_id}/logs` });
    },
  );
};

/** The most failed pages one retry fetches again (a retry of the retry takes the rest). */
const MAX_RETRY_URLS = 10_000;

export default jobsRoutes;
