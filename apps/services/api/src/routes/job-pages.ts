import { Readable } from 'node:stream';
import { ContentNotFoundError, FORMAT_MEDIA_TYPES, isTextFormat, type ContentFormat, type TextFormat } from '@trawl/content';
import type { FastifyPluginAsync } from 'fastify';
import { findJob } from '../data/jobs.ts';
import { deleteJobContent } from '../content/delete-job-content.ts';
import { listPages, pageDownload, pageFormatHash, type PageRow } from '../data/job-pages.ts';
import { ApiError, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { contentFilename, userContentHeaders } from '../http/user-content.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { pageContentQuery, pageListQuery } from '../schemas/jobs.ts';

interface PageListQuery {
  ok?: boolean;
  duplicate?: boolean;
  limit: number;
  cursor?: string;
  format: 'json' | 'ndjson';
  include?: TextFormat;
}

/** Pages read per query while a job streams as NDJSON. */
const NDJSON_BATCH = 200;

function publicPage({ sort_at: _sortAt, ...page }: PageRow): Omit<PageRow, 'sort_at'> {
  return page;
}

const jobPagesRoutes: FastifyPluginAsync = async (fastify) => {
  /** A stored object's bytes; ContentNotFoundError when it is gone, DEPENDENCY_UNAVAILABLE when the store does not answer. */
  const objectBytes = async (hash: string): Promise<Buffer> => {
    try {
      return (await fastify.content.get(hash)).body;
    } catch (err) {
      if (err instanceof ContentNotFoundError) throw err;
      throw new ApiError('DEPENDENCY_UNAVAILABLE', 'the content store does not answer; retry later', { cause: err });
    }
  };
  const objectText = async (hash: string): Promise<string> => (await objectBytes(hash)).toString('utf8');

  async function* ndjson(jobId: string, q: PageListQuery): AsyncGenerator<string> {
    let after = decodeCursor(q.cursor);
    for (;;) {
      const pages = await listPages(fastify.db, { jobId, limit: NDJSON_BATCH, ...(q.ok === undefined ? {} : { ok: q.ok }), ...(q.duplicate === undefined ? {} : { duplicate: q.duplicate }), ...(after ? { after } : {}) });
      for (const page of pages) {
        const line: Record<string, unknown> = publicPage(page);
        if (q.include) {
          const hash = page.formats.find((f) => f.format === q.include)?.hash;
          const text = hash ? await objectText(hash).catch((err: unknown) => (err instanceof ContentNotFoundError ? null : Promise.reject(err))) : null;
          // The structured data is JSON: inlined as its object, not as a string of it.
          line[q.include] = q.include === 'metadata' && text !== null ? JSON.parse(text) : text;
        }
        yield `${JSON.stringify(line)}\n`;
      }
      const last = pages[pages.length - 1];
      if (pages.length < NDJSON_BATCH || !last) return;
      after = { at: last.sort_at, id: last.fetch_id };
    }
  }

  fastify.get<{ Params: { id: string }; Querystring: PageListQuery }>(
    '/jobs/:id/pages',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Pages fetched or failed by a job, in fetch order',
        description: 'A page of results (`limit`, `cursor`), or with `format=ndjson` the whole job as `application/x-ndjson`, each page with its stored content when `include` names a format.',
        params: jobIdParams,
        querystring: pageListQuery,
        response: {
          200: {
            description: 'JSON (below), or with `format=ndjson` an `application/x-ndjson` stream of every page, one a line',
            type: 'object',
            required: ['pages', 'next_cursor'],
            properties: { pages: { type: 'array', items: { $ref: 'Page#' } }, next_cursor: { type: ['string', 'null'] } },
          },
          ...errorResponses('JOB_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      const { ok, duplicate, limit, cursor, format } = request.query;
      if (format === 'ndjson') return reply.type('application/x-ndjson; charset=utf-8').send(Readable.from(ndjson(id, request.query)));
      if (request.query.include) throw new ApiError('BAD_REQUEST', '`include` needs `format=ndjson`', { field: 'include' });
      const after = decodeCursor(cursor);
      const pages = await listPages(fastify.db, { jobId: id, limit, ...(ok === undefined ? {} : { ok }), ...(duplicate === undefined ? {} : { duplicate }), ...(after ? { after } : {}) });
      const last = pages[pages.length - 1];
      return { pages, next_cursor: pages.length === limit && last ? encodeCursor(last.sort_at, last.fetch_id) : null };
    },
  );

  fastify.get<{ Params: { id: string; fetch_id: string }; Querystring: { format: ContentFormat; inline: boolean } }>(
    '/jobs/:id/pages/:fetch_id/content',
    {
      schema: {
        tags: ['jobs'],
        summary: "A page's stored content in one format",
        description:
          'The body as fetched (`html`), its main content as text (`text`) or as Markdown (`markdown`), a PNG `screenshot` or a `pdf` of the rendered page, its structured data as JSON (`metadata`: title, description, language, canonical, `open_graph`, `twitter`, `json_ld`, `microdata`), as the job asked with `formats`. ' +
          "Crawled content is anyone's, so it is served sandboxed: `Content-Security-Policy: sandbox` (a browser runs none of its scripts, gives it no origin and loads nothing it names from elsewhere), " +
          '`X-Content-Type-Options: nosniff`, and `Content-Disposition: attachment` (a browser saves it) unless `inline=true`.',
        params: { type: 'object', required: ['id', 'fetch_id'], properties: { ...jobIdParams.properties, fetch_id: { type: 'string', maxLength: 100 } } },
        querystring: pageContentQuery,
        response: {
          200: { description: 'the content, as text/html, text/plain, text/markdown, image/png, application/pdf or application/json (`metadata`), sandboxed (see above)', type: 'string' },
          ...errorResponses('JOB_NOT_FOUND', 'PAGE_NOT_FOUND', 'CONTENT_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const { id, fetch_id: fetchId } = request.params;
      const { format, inline } = request.query;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      const hash = await pageFormatHash(fastify.db, id, fetchId, format);
      if (hash === undefined) throw new ApiError('PAGE_NOT_FOUND', `job ${id} has no page ${fetchId}`);
      if (hash === null) throw new ApiError('CONTENT_NOT_FOUND', `page ${fetchId} has no stored ${format}`);
      try {
        // Text formats are sent as text (the charset is in their type); a screenshot, PDF or the metadata's
        // JSON as the bytes stored (a string typed application/json would be serialised again).
        const body = isTextFormat(format) && format !== 'metadata' ? await objectText(hash) : await objectBytes(hash);
        return userContentHeaders(reply, { filename: contentFilename(fetchId, format), inline }).type(FORMAT_MEDIA_TYPES[format]).header('etag', `"${hash}"`).send(body);
      } catch (err) {
        if (err instanceof ContentNotFoundError) throw new ApiError('CONTENT_NOT_FOUND', `the ${format} of page ${fetchId} is no longer stored`);
        throw err;
      }
    },
  );

  fastify.get<{ Params: { id: string; fetch_id: string; sha256: string }; Querystring: { inline: boolean } }>(
    '/jobs/:id/pages/:fetch_id/downloads/:sha256',
    {
      schema: {
        tags: ['jobs'],
        summary: 'A linked file kept for a page',
        description:
          "One of the files the crawl's `downloads` kept for the page (listed in its `downloads`), as it was served, with its Content-Type. Served sandboxed like stored content: `Content-Security-Policy: sandbox`, `X-Content-Type-Options: nosniff`, and `Content-Disposition: attachment` unless `inline=true`.",
        params: {
          type: 'object',
          required: ['id', 'fetch_id', 'sha256'],
          properties: { ...jobIdParams.properties, fetch_id: { type: 'string', maxLength: 100 }, sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
        },
        querystring: { type: 'object', additionalProperties: false, properties: { inline: { type: 'boolean', default: false, description: 'let a browser show it rather than save it' } } },
        response: {
          200: { description: "the file's bytes, typed as it was served, sandboxed (see above)", type: 'string' },
          ...errorResponses('JOB_NOT_FOUND', 'PAGE_NOT_FOUND', 'CONTENT_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const { id, fetch_id: fetchId, sha256 } = request.params;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      const file = await pageDownload(fastify.db, id, fetchId, sha256);
      if (file === undefined) throw new ApiError('PAGE_NOT_FOUND', `job ${id} has no page ${fetchId}`);
      if (file === null) throw new ApiError('CONTENT_NOT_FOUND', `page ${fetchId} kept no file ${sha256}`);
      try {
        const body = await objectBytes(sha256);
        const name = new URL(file.url).pathname.split('/').pop() || 'download';
        return userContentHeaders(reply, { filename: contentFilename(name.replace(/\.[^.]*$/, ''), name.includes('.') ? name.split('.').pop()! : 'bin'), inline: request.query.inline })
          .type(file.content_type ?? 'application/octet-stream')
          .header('etag', `"${sha256}"`)
          .send(body);
      } catch (err) {
        if (err instanceof ContentNotFoundError) throw new ApiError('CONTENT_NOT_FOUND', `the file ${sha256} of page ${fetchId} is no longer stored`);
        throw err;
      }
    },
  );

  fastify.delete<{ Params: { id: string } }>(
    '/jobs/:id/content',
    {
      schema: {
        tags: ['jobs'],
        summary: "Delete a job's stored content",
        description:
          "Removes from the content store every object of the job's pages that no other job's page names (identical pages are stored once and shared; a job whose content is deleted keeps nothing alive). The pages stay listed; their content then answers CONTENT_NOT_FOUND. Content is also deleted by itself once the job's `content_retention` has run out.",
        params: jobIdParams,
        response: {
          200: { type: 'object', required: ['deleted_objects'], properties: { deleted_objects: { type: 'integer', description: 'objects removed; the rest are shared with other jobs' } } },
          ...errorResponses('JOB_NOT_FOUND'),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      const store = {
        delete: async (hashes: readonly string[]) => {
          try {
            await fastify.content.delete(hashes);
          } catch (err) {
            throw new ApiError('DEPENDENCY_UNAVAILABLE', 'the content store does not answer; retry later', { cause: err });
          }
        },
      };
      return { deleted_objects: (await deleteJobContent(fastify.db, store, id, 'request')) ?? 0 };
    },
  );
};

export default jobPagesRoutes;
