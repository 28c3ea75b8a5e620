/**
 * `GET /jobs/:id/logs`: Server-Sent Events. History first (job_log rows after `Last-Event-ID`),
 * then live lines by polling for `seq > last`, then `event: end` with the final status.
 *
 * No gaps, no repeats: projector-pg writes a job's log rows gapless, in commit order, in the same
 * transaction as the job's status (READ-MODEL.md). So each round reads the status first and the
 * rows second: once a terminal status is seen, every row up to its `log_seq` is visible, and the
 * stream ends only after sending them. The `id:` of each line is its seq, which a reconnecting
 * EventSource sends back as `Last-Event-ID`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { findJob, isTerminal, jobProgress } from '../data/jobs.ts';
import { logAfter } from '../data/job-log.ts';
import { notFound } from '../errors.ts';
import { lastEventId, sleep, sseComment, sseEvent } from '../http/sse.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { logQuery } from '../schemas/jobs.ts';

const BATCH = 500;

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
          '`event: end` / `data: {status, ...counters}`. Reconnect with `Last-Event-ID` to resume without gaps or repeats.',
        params: jobIdParams,
        querystring: logQuery,
        produces: ['text/event-stream'],
        response: { 200: { description: 'text/event-stream', type: 'string' }, ...errorResponses('JOB_NOT_FOUND') },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const job = await findJob(fastify.db, id, request.userId);
      if (!job) throw notFound('JOB_NOT_FOUND', id);
      let last = lastEventId(request.headers['last-event-id'], request.query.last_event_id);

      const controller = new AbortController();
      const { signal } = controller;
      open.add(controller);
      request.raw.once('close', () => controller.abort());
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

      try {
        while (!signal.aborted) {
          const progress = await jobProgress(fastify.db, id);
          const rows = await logAfter(fastify.db, id, last, BATCH);
          for (const row of rows) {
            await write(sseEvent('log', { seq: row.seq, ts: row.ts, level: row.level, msg: row.msg, event: row.event, event_id: row.event_id, data: row.data ?? {} }, row.seq));
            last = row.seq;
          }
          if (rows.length === BATCH) continue;
          if (progress && isTerminal(progress.status) && last >= progress.log_seq) {
            const final = await findJob(fastify.db, id, request.userId);
            await write(sseEvent('end', {
              job_id: id,
              status: progress.status,
              pages_fetched: final?.pages_fetched ?? 0,
              pages_failed: final?.pages_failed ?? 0,
              items_extracted: final?.items_extracted ?? 0,
              error: final?.error ?? null,
            }));
            break;
          }
          if (Date.now() - lastWrite >= fastify.config.sseHeartbeatMs) await write(sseComment('keep-alive'));
          await sleep(fastify.config.ssePollMs, signal);
        }
      } catch (err) {
        request.log.warn({ err, job_id: id }, 'log stream ended by an error');
      } finally {
        open.delete(controller);
        fastify.metrics.sseStreams.dec();
        raw.end();
      }
    },
  );
};

export default jobLogsRoutes;
