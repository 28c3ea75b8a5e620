/**
 * Websites ("spiders"): how to crawl and scrape a site. A user sees their own and the shared ones
 * (no owner, read-only); a website id is global, so creating one that another user holds is 409.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { deleteWebsite, getWebsite, inTransaction, listWebsites, upsertWebsite, type Website } from '@trawl/store';
import { lockId, ownerOf } from '../data/ownership.ts';
import { ApiError, notFound } from '../errors.ts';
import { checkPatterns } from '../crawl/check-patterns.ts';
import { checkSelectors } from '../crawl/check-selectors.ts';
import { maskedOptions } from '../http/masked-options.ts';
import { checkOptions, hostsOf } from '../crawl/check-request-options.ts';
import { errorResponses, userIdParams } from '../schemas/common.ts';
import { websiteBody } from '../schemas/configuration.ts';

type WebsiteBody = Omit<Website, 'id' | 'owner_id'> & { id?: string };

/** What a website's request options may be refused with (check-request-options.ts). */
const OPTION_ERRORS = ['HEADER_NOT_ALLOWED', 'INVALID_HEADER', 'REQUEST_OPTIONS_TOO_LARGE', 'INVALID_LOCALE', 'INVALID_COOKIE', 'COOKIE_DOMAIN_NOT_CRAWLED'] as const;

function toView(w: Website) {
  return { ...maskedOptions(w), shared: w.owner_id === null };
}

const websitesRoutes: FastifyPluginAsync = async (fastify) => {
  async function save(userId: string, id: string, body: WebsiteBody, mustBeNew: boolean): Promise<{ website: Website; created: boolean }> {
    checkPatterns(body);
    checkSelectors(body);
    checkOptions(body, hostsOf([body.base_url], body.allowed_hosts));
    return inTransaction(fastify.db, async (tx) => {
      await lockId(tx, 'website', id);
      const owner = await ownerOf(tx, 'websites', id);
      if (owner === null) throw new ApiError('READ_ONLY_RESOURCE', `website ${id} is shared and read-only`);
      if (owner !== undefined && (owner !== userId || mustBeNew)) throw new ApiError('ID_TAKEN', `website id ${id} is taken`, { field: 'id' });
      const { id: _ignored, ...fields } = body;
      const website = await upsertWebsite(tx, { ...fields, id, owner_id: userId });
      return { website, created: owner === undefined };
    });
  }

  const response = { 200: { $ref: 'Website#' }, 201: { $ref: 'Website#' } };

  fastify.get('/websites', {
    schema: {
      tags: ['websites'],
      summary: 'Websites visible to the caller: their own and the shared ones',
      response: { 200: { type: 'object', required: ['websites'], properties: { websites: { type: 'array', items: { $ref: 'Website#' } } } }, ...errorResponses() },
    },
  }, async (request) => ({ websites: (await listWebsites(fastify.db, request.userId)).map(toView) }));

  fastify.get<{ Params: { id: string } }>('/websites/:id', {
    schema: { tags: ['websites'], summary: 'One website', params: userIdParams, response: { 200: response[200], ...errorResponses('WEBSITE_NOT_FOUND') } },
  }, async (request) => {
    const w = await getWebsite(fastify.db, request.params.id);
    if (!w || (w.owner_id !== null && w.owner_id !== request.userId)) throw notFound('WEBSITE_NOT_FOUND', request.params.id);
    return toView(w);
  });

  fastify.post<{ Body: WebsiteBody }>('/websites', {
    schema: { tags: ['websites'], summary: 'Create a website', body: websiteBody, response: { 201: response[201], ...errorResponses('ID_TAKEN', 'READ_ONLY_RESOURCE', ...OPTION_ERRORS) } },
  }, async (request, reply) => {
    const { website } = await save(request.userId, request.body.id ?? randomUUID(), request.body, true);
    return reply.code(201).send(toView(website));
  });

  fastify.put<{ Params: { id: string }; Body: WebsiteBody }>('/websites/:id', {
    schema: {
      tags: ['websites'],
      summary: 'Create or replace one of your websites',
      params: userIdParams,
      body: websiteBody,
      response: { ...response, ...errorResponses('ID_TAKEN', 'READ_ONLY_RESOURCE', ...OPTION_ERRORS) },
    },
  }, async (request, reply) => {
    if (request.body.id !== undefined && request.body.id !== request.params.id) {
      throw new ApiError('VALIDATION_FAILED', 'id in the body differs from the id in the path', { field: 'id' });
    }
    const { website, created } = await save(request.userId, request.params.id, request.body, false);
    return reply.code(created ? 201 : 200).send(toView(website));
  });

  fastify.delete<{ Params: { id: string } }>('/websites/:id', {
    schema: {
      tags: ['websites'],
      summary: 'Delete one of your websites (it must have no targets)',
      params: userIdParams,
      response: { 204: { type: 'null', description: 'deleted' }, ...errorResponses('WEBSITE_NOT_FOUND', 'READ_ONLY_RESOURCE', 'WEBSITE_IN_USE') },
    },
  }, async (request, reply) => {
    const w = await getWebsite(fastify.db, request.params.id);
    if (!w || (w.owner_id !== null && w.owner_id !== request.userId)) throw notFound('WEBSITE_NOT_FOUND', request.params.id);
    if (w.owner_id === null) throw new ApiError('READ_ONLY_RESOURCE', `website ${w.id} is shared and read-only`);
    try {
      await deleteWebsite(fastify.db, w.id, request.userId);
    } catch (err) {
      if ((err as { code?: string }).code === '23503') throw new ApiError('WEBSITE_IN_USE', `website ${w.id} still has targets`, { cause: err });
      throw err;
    }
    return reply.code(204).send();
  });
};

export default websitesRoutes;
