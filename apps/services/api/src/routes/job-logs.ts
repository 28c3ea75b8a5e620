/**
 * `GET /jobs/:id/logs`: Server-Sent Events. History first (job_log rows after `Last-Event-ID`),
 * then live lines, then `event: end` with the final status and counters.
 *
 * The rows come from the job's shared poller (logs/job-log-poller.ts): one poll of the job per
 * round for all of its streams on this instance, each stream reading its own history until it
 * has caught up. No gaps, no repeats, no early end: projector-pg writes a job's log rows gapless,
 * in commit order, in the same transaction as the job's status (READ-MODEL.md), and the poller
 * reads the status before the rows. The `id:` of each line is its seq, which a reconnecting
 * EventSource sends back as `Last-Event-ID`.
 *
 * Each stream takes one of the user's stream slots (`TRAWL_API_MAX_STREAMS_PER_USER`) for as long
 * as it is open. A stream whose key is revoked ends as soon as the API hears of it (a Postgres
 * notification; at the latest the key index's next resync), through `fastify.watchKey`, with `event: end` / `data: {job_id, reason: "key_revoked"}`: no status, no
 * counters, nothing more of the job for a key that no longer has the right to it.
 */
import type { FastifyPluginAsync } from 'fastify';
import { findJob } from '../data/jobs.ts';
import { notFound } from '../errors.ts';
import { lastEventId, sseComment, sseEvent } from '../http/sse.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { logQuery } from '../schemas/jobs.ts';

const jobLogsRoutes: FastifyPluginAsync = async (fastify) => {
  const open = new Set<AbortController>();
  // Open streams would keep server.close() waiting for ever: end them first.
  fastify.addHook('preClose', async () => {
    for (const c of open) c.abort();
  });

  fastify.get<{ Params: { id: string }; Querystring: { last_event_id?: number; access_token?: string } }>(
    '/jobs/:id/logs',
    {
      config: { allowQueryToken: true },
      schema: {
        tags: ['jobs'],
        summary: "A job's log as Server-Sent Events: history, live lines, then `event: end`",
        description:
          'Each line is `id: <seq>` / `event: log` / `data: {seq, ts, level, msg, event, event_id, data}`; the stream ends with ' +
          '`event: end` / `data: {status, ...counters}`. Reconnect with `Last-Event-ID` to resume without gaps or repeats. ' +
          'When the API key is revoked the stream ends early with `event: end` / `data: {job_id, reason: "key_revoked"}`.',
        params: jobIdParams,
        querystring: logQuery,
        produces: ['text/event-stream'],
        response: { 200: { description: 'text/event-stream', type: 'string' }, ...errorResponses('JOB_NOT_FOUND', 'TOO_MANY_STREAMS') },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const job = await findJob(fastify.db, id, request.userId);
      if (!job) throw notFound('JOB_NOT_FOUND', id);
      const last = lastEventId(request.headers['last-event-id'], request.query.last_event_id);
      const release = fastify.limits.stream(request.userId);

      const controller = new AbortController();
      const { signal } = controller;
      open.add(controller);
      request.raw.once('close', () => controller.abort());
      let revoked = false;
      let ending = false;
      const unwatch = fastify.watchKey(request, () => {
        if (signal.aborted || ending) return; // ending anyway: the client left, the server stops, or the job's end is on its way
        revoked = true;
        controller.abort();
      });
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      raw.write('retry: 2000\n\n');
      fastify.metrics.sseStreams.inc();
      let lastWrite = Date.now();
      const write = (chunk: string) => {
        lastWrite = Date.now();
        // Backpressure: a client that does not read gets no more than the socket buffer holds
        // before we wait for it to drain (or to go away).
        if (!raw.write(chunk)) return new Promise<void>((resolve) => {
          raw.once('drain', resolve);
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        return undefined;
      };

      const follower = fastify.jobLogs.follow(id, last);
      try {
        while (!signal.aborted) {
          const step = await follower.next(fastify.config.sseHeartbeatMs, signal);
          if (step.kind === 'rows') {
            for (const row of step.rows) {
              if (signal.aborted) break;
              await write(sseEvent('log', { seq: row.seq, ts: row.ts, level: row.level, msg: row.msg, event: row.event, event_id: row.event_id, data: row.data ?? {} }, row.seq));
            }
          } else if (step.kind === 'end') {
            if (signal.aborted) break;
            ending = true;
            const p = step.progress;
            await write(sseEvent('end', {
              job_id: id,
              status: p.status,
              pages_fetched: p.pages_fetched,
              pages_failed: p.pages_failed,
              items_extracted: p.items_extracted,
              error: p.error,
            }));
            break;
          } else if (Date.now() - lastWrite >= fastify.config.sseHeartbeatMs) {
            await write(sseComment('keep-alive'));
          }
        }
      } catch (err) {
        if (!revoked) request.log.warn({ err, job_id: id }, 'log stream ended by an error');
      } finally {
        unwatch();
        follower.close();
        release();
        open.delete(controller);
        fastify.metrics.sseStreams.dec();
        if (revoked && !raw.destroyed) raw.write(sseEvent('end', { job_id: id, reason: 'key_revoked' }));
        raw.end();
      }
    },
  );
};

export default jobLogsRoutes;
