/**
 * A job's items: pages of JSON, or every item streamed as NDJSON or CSV (chosen by `?format=` or
 * the `Accept` header). Streams read Postgres in keyset batches, so an export of millions of items
 * holds one batch in memory and no transaction open; a client that reads slowly slows the reads
 * down (the stream is pulled, not pushed).
 */
import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { findJob } from '../data/jobs.ts';
import { allItems, itemFieldNames, listItems, type ItemRow } from '../data/job-items.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { csvLine } from '@trawl/store';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { itemListQuery } from '../schemas/jobs.ts';

type Format = 'json' | 'ndjson' | 'csv';

function formatOf(request: FastifyRequest<{ Querystring: { format?: Format } }>): Format {
  if (request.query.format) return request.query.format;
  const accept = request.headers.accept ?? '';
  if (/application\/(x-)?ndjson/.test(accept)) return 'ndjson';
  if (/text\/csv/.test(accept)) return 'csv';
  return 'json';
}

async function* ndjson(items: AsyncIterable<ItemRow>): AsyncGenerator<string> {
  for await (const { sort_at: _position, ...item } of items) yield JSON.stringify(item) + '\n';
}

/**
 * One line per item: its key, URL, time, `errors`, then its fields by name. `errors` is the JSON
 * array the other formats carry (`["/price must be number"]`), empty for a valid item: an error
 * message quotes schema paths, patterns and values, so any separator a joined form chose could
 * appear inside one, whereas JSON parses back to the same list; and a blank cell is how a
 * spreadsheet filters the valid items.
 */
async function* csv(fields: readonly string[], items: AsyncIterable<ItemRow>): AsyncGenerator<string> {
  yield csvLine(['item_key', 'url', 'extracted_at', 'errors', ...fields]);
  for await (const item of items) {
    const errors = item.errors.length > 0 ? item.errors : null;
    yield csvLine([item.item_key, item.url, item.extracted_at, errors, ...fields.map((f) => item.fields[f])]);
  }
}

const jobItemsRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get<{ Params: { id: string }; Querystring: { format?: Format; limit: number; cursor?: string; valid?: boolean } }>(
    '/jobs/:id/items',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Items extracted by a job: JSON pages, or an NDJSON / CSV export of all of them',
        params: jobIdParams,
        querystring: itemListQuery,
        response: {
          200: {
            description: 'JSON (below), or `application/x-ndjson` / `text/csv` streams with one item per line',
            type: 'object',
            required: ['items', 'next_cursor'],
            properties: { items: { type: 'array', items: { $ref: 'Item#' } }, next_cursor: { type: ['string', 'null'] } },
          },
          ...errorResponses('JOB_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      const format = formatOf(request);
      if (format === 'json') {
        const after = decodeCursor(request.query.cursor);
        const { valid } = request.query;
        const items = await listItems(fastify.db, { jobId: id, limit: request.query.limit, ...(after ? { after } : {}), ...(valid === undefined ? {} : { valid }) });
        const last = items[items.length - 1];
        return { items, next_cursor: items.length === request.query.limit && last ? encodeCursor(last.sort_at, last.item_key) : null };
      }
      const rows = allItems(fastify.db, id, request.query.valid);
      if (format === 'ndjson') {
        return reply
          .type('application/x-ndjson; charset=utf-8')
          .header('content-disposition', `attachment; filename="items-${id}.ndjson"`)
          .send(Readable.from(ndjson(rows)));
      }
      const fields = await itemFieldNames(fastify.db, id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="items-${id}.csv"`)
        .send(Readable.from(csv(fields, rows)));
    },
  );
};

export default jobItemsRoutes;
