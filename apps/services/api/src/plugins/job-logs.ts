/**
 * The job-log hub behind `GET /jobs/:id/logs`: one poller per job with open streams on this
 * instance (logs/job-log-poller.ts), reading the projector's `jobs` and `job_log` rows.
 */
import fp from 'fastify-plugin';
import { isTerminal, jobProgress } from '../data/jobs.ts';
import { logAfter } from '../data/job-log.ts';
import { JobLogHub } from '../logs/job-log-poller.ts';

declare module 'fastify' {
  interface FastifyInstance {
    jobLogs: JobLogHub;
  }
}

export default fp(
  async (fastify) => {
    const hub = new JobLogHub(
      { progress: (jobId) => jobProgress(fastify.db, jobId), rowsAfter: (jobId, after, limit) => logAfter(fastify.db, jobId, after, limit) },
      {
        pollMs: fastify.config.ssePollMs,
        isTerminal,
        onError: (err) => fastify.log.warn({ err }, 'job log poll failed; retrying at the next round'),
      },
    );
    fastify.decorate('jobLogs', hub);
  },
  { name: 'job-logs', dependencies: ['dependencies'], fastify: '5.x' },
);
