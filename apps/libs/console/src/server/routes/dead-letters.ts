/**
 * The caller's dead letters and their re-drive, from projector-pg's `dead_letters` read model: a
 * dead letter is the caller's when the job its value names is theirs (undecodable ones name no job
 * and are shown to nobody; an operator reads them in SQL). Pages are keyset pages of the caller's
 * rows, newest first; no topic is read. A re-drive republishes the original key and value (kept
 * in the row) to the origin topic, once per dead letter.
 */
import '../host-app.ts';
import type { FastifyPluginAsync } from 'fastify';
import { DEAD_LETTER_ID, type DeadLetter } from '../dead-letters/dead-letter-entry.ts';
import { decodeCursor, encodeCursor, findDeadLetter, listDeadLetters } from '../dead-letters/dead-letter-store.ts';
import { deadLetterPosition, redriveRecord } from '../dead-letters/redrive-record.ts';
import type { RedriveLog } from '../dead-letters/redrive-log.ts';
import { ConsoleError, unavailable } from '../errors.ts';
import { ownedJobs } from '../ownership.ts';
import type { ConsoleServices } from '../console-services.ts';
import { errorResponses } from './error-responses.ts';

export interface DeadLetterRouteOptions {
  readonly services: ConsoleServices;
  readonly redrives: RedriveLog;
}

/** A dead letter as the console lists it (a shared schema: `DeadLetter` in the OpenAPI document). */
export const deadLetterView = {
  $id: 'DeadLetter',
  type: 'object',
  required: ['id', 'source', 'topic', 'partition', 'offset', 'origin', 'reason', 'error_class', 'error_code', 'error_message', 'attempts', 'failed_at', 'event', 'job_id', 'url', 'key', 'redriven_at', 'job_status'],
  properties: {
    id: { type: 'string' },
    source: { type: 'string', enum: ['fetch', 'events'] },
    topic: { type: 'string' },
    partition: { type: 'integer' },
    offset: { type: 'string' },
    origin: { type: 'object', required: ['topic', 'partition', 'offset'], properties: { topic: { type: 'string' }, partition: { type: 'integer' }, offset: { type: 'string' } } },
    reason: { type: ['string', 'null'], description: 'undecodable, non-retriable or exhausted' },
    error_class: { type: ['string', 'null'] },
    error_code: { type: ['string', 'null'] },
    error_message: { type: ['string', 'null'] },
    attempts: { type: ['integer', 'null'] },
    failed_at: { type: ['string', 'null'], format: 'date-time' },
    event: { type: ['string', 'null'] },
    job_id: { type: ['string', 'null'] },
    url: { type: ['string', 'null'] },
    key: { type: ['string', 'null'] },
    redriven_at: { type: ['string', 'null'], format: 'date-time' },
    job_status: { type: ['string', 'null'], description: "the job's status: workers skip re-driven fetches of jobs that are over" },
  },
} as const;

interface ListQuery {
  source?: 'fetch' | 'events';
  job_id?: string;
  limit: number;
  cursor?: string;
}

const deadLetterRoutes: FastifyPluginAsync<DeadLetterRouteOptions> = async (fastify, { services, redrives }) => {
  fastify.get<{ Querystring: ListQuery }>(
    '/dead-letters',
    {
      schema: {
        tags: ['console'],
        summary: "The caller's dead letters, newest first, a page at a time: what failed, why, and whether it was re-driven",
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            source: { type: 'string', enum: ['fetch', 'events'] },
            job_id: { type: 'string', pattern: '^[0-9a-fA-F-]{36}$' },
            limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
            cursor: { type: 'string', maxLength: 400, description: 'opaque; `next_cursor` of the previous page' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['dead_letters', 'next_cursor'],
            properties: {
              dead_letters: { type: 'array', items: { $ref: 'DeadLetter#' } },
              next_cursor: { type: ['string', 'null'], description: 'the next (older) page; null on the last' },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { source, job_id: jobId, limit, cursor } = request.query;
      const page = await listDeadLetters(fastify.db, {
        userId: request.userId,
        limit,
        ...(source ? { source } : {}),
        ...(jobId ? { jobId } : {}),
        ...(cursor ? { after: decodeCursor(cursor) } : {}),
      });
      const letters = page.letters;
      const [jobs, redriven] = await Promise.all([
        ownedJobs(fastify.db, request.userId, letters.flatMap((d) => (d.view.job_id ? [d.view.job_id] : []))),
        redrives.of(request.userId, letters.map(deadLetterPosition)),
      ]);
      return {
        dead_letters: letters.map((d) => ({
          ...d.view,
          redriven_at: redriven.get(deadLetterPosition(d))?.toISOString() ?? null,
          job_status: d.view.job_id ? (jobs.get(d.view.job_id) ?? null) : null,
        })),
        next_cursor: page.next ? encodeCursor(page.next) : null,
      };
    },
  );

  fastify.post<{ Params: { id: string } }>(
    '/dead-letters/:id/redrive',
    {
      schema: {
        tags: ['console'],
        summary: 'Republish a dead letter (its original key and value) to its origin topic, once',
        params: { type: 'object', properties: { id: { type: 'string', pattern: DEAD_LETTER_ID.source } }, required: ['id'] },
        response: {
          202: {
            type: 'object',
            required: ['id', 'topic', 'job_id', 'redriven_at'],
            properties: { id: { type: 'string' }, topic: { type: 'string' }, job_id: { type: 'string' }, redriven_at: { type: 'string', format: 'date-time' } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const letter: DeadLetter | undefined = await findDeadLetter(fastify.db, id, request.userId);
      const jobId = letter?.view.job_id;
      if (!letter || !jobId) throw new ConsoleError('DEAD_LETTER_NOT_FOUND', `dead letter ${id} not found`);
      const record = redriveRecord(letter, services.redriveTopics);
      if (!record) throw new ConsoleError('NOT_REDRIVABLE', `dead letter ${id} names origin topic "${letter.view.origin.topic}", which is not one of Trawl's`);
      const position = deadLetterPosition(letter);
      if (!(await redrives.claim(position, request.userId, jobId, record.topic))) {
        throw new ConsoleError('ALREADY_REDRIVEN', `dead letter ${id} was re-driven already`);
      }
      try {
        await services.sendRaw(record);
      } catch (err) {
        await redrives.release(position);
        throw unavailable('Kafka', err);
      }
      request.log.info({ dead_letter: position, topic: record.topic, job_id: jobId }, 'dead letter re-driven');
      return reply.code(202).send({ id, topic: record.topic, job_id: jobId, redriven_at: new Date().toISOString() });
    },
  );
};

export default deadLetterRoutes;
