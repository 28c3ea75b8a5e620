/**
 * The caller's dead letters and their re-drive. A dead letter is the caller's when its decoded
 * value names a job the caller owns; undecodable ones name no job and are shown to nobody (an
 * operator reads them with Kafka tools). A re-drive republishes the original key and value to
 * the origin topic, once per dead letter.
 */
import '../host-app.ts';
import type { FastifyPluginAsync } from 'fastify';
import { DEAD_LETTER_ID, type DeadLetter } from '../dead-letters/dead-letter-entry.ts';
import type { DeadLetterReader } from '../dead-letters/dead-letter-reader.ts';
import { deadLetterPosition, redriveRecord } from '../dead-letters/redrive-record.ts';
import type { RedriveLog } from '../dead-letters/redrive-log.ts';
import { ConsoleError, unavailable } from '../errors.ts';
import { ownedJobIds, ownedJobs } from '../ownership.ts';
import type { ConsoleServices } from '../console-services.ts';
import { errorResponses } from './error-responses.ts';

export interface DeadLetterRouteOptions {
  readonly services: ConsoleServices;
  readonly reader: DeadLetterReader;
  readonly redrives: RedriveLog;
}

const deadLetterView = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    source: { type: 'string', enum: ['fetch', 'events'] },
    topic: { type: 'string' },
    partition: { type: 'integer' },
    offset: { type: 'string' },
    origin: { type: 'object', properties: { topic: { type: 'string' }, partition: { type: 'integer' }, offset: { type: 'string' } } },
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
}

const deadLetterRoutes: FastifyPluginAsync<DeadLetterRouteOptions> = async (fastify, { services, reader, redrives }) => {
  async function readAll(): Promise<DeadLetter[]> {
    try {
      return await reader.all();
    } catch (err) {
      throw unavailable('Kafka (dead-letter topics)', err);
    }
  }

  fastify.get<{ Querystring: ListQuery }>(
    '/dead-letters',
    {
      schema: {
        tags: ['console'],
        summary: "The caller's dead letters, newest first: what failed, why, and whether it was re-driven",
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            source: { type: 'string', enum: ['fetch', 'events'] },
            job_id: { type: 'string', pattern: '^[0-9a-fA-F-]{36}$' },
            limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: { dead_letters: { type: 'array', items: deadLetterView }, total: { type: 'integer' } },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { source, job_id: jobId, limit } = request.query;
      const letters = (await readAll()).filter((d) => d.view.job_id && (!source || d.view.source === source) && (!jobId || d.view.job_id === jobId));
      const owned = await ownedJobs(fastify.db, request.userId, letters.map((d) => d.view.job_id!));
      const mine = letters.filter((d) => owned.has(d.view.job_id!));
      const shown = mine.slice(0, limit);
      const redriven = await redrives.of(request.userId, shown.map(deadLetterPosition));
      return {
        dead_letters: shown.map((d) => ({
          ...d.view,
          redriven_at: redriven.get(deadLetterPosition(d))?.toISOString() ?? null,
          job_status: owned.get(d.view.job_id!) ?? null,
        })),
        total: mine.length,
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
            properties: { id: { type: 'string' }, topic: { type: 'string' }, job_id: { type: 'string' }, redriven_at: { type: 'string', format: 'date-time' } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      let letter: DeadLetter | undefined;
      try {
        letter = await reader.find(id);
      } catch (err) {
        throw unavailable('Kafka (dead-letter topics)', err);
      }
      const jobId = letter?.view.job_id;
      if (!letter || !jobId || !(await ownedJobIds(fastify.db, request.userId, [jobId])).has(jobId)) {
        throw new ConsoleError('DEAD_LETTER_NOT_FOUND', `dead letter ${id} not found`);
      }
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
