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
import { checkSelectors, normaliseItemFields, type ItemFieldInput } from '../crawl/check-selectors.ts';
import { maskedOptions } from '../http/masked-options.ts';
import { checkOptions, checkReach, hostsOf } from '../crawl/check-request-options.ts';
import { reachLayer, type ReachInput } from '../crawl/reach-input.ts';
import { redactCredentials, sealForStorage, userSecretLookup } from '@trawl/store/secrets';
import { errorResponses, userIdParams } from '../schemas/common.ts';
import { websiteBody } from '../schemas/configuration.ts';

type WebsiteBody = Omit<Website, 'id' | 'owner_id' | 'reach' | 'item_fields'> & Omit<ReachInput, 'include_patterns' | 'exclude_patterns'> & { id?: string; item_fields: readonly ItemFieldInput[] };

/** What a website's request options may be refused with (check-request-options.ts). */
const OPTION_ERRORS = ['HEADER_NOT_ALLOWED', 'INVALID_HEADER', 'REQUEST_OPTIONS_TOO_LARGE', 'INVALID_LOCALE', 'INVALID_COOKIE', 'COOKIE_DOMAIN_NOT_CRAWLED', 'INVALID_PROXY', 'PROXY_NOT_ALLOWED', 'ACTIONS_TOO_MANY', 'INVALID_ACTION', 'UNSUPPORTED_SELECTOR'] as const;

/** A website as answers show it: header and cookie values masked, its reach options flat with credentials redacted. */
function toView(w: Website) {
  const { reach, ...rest } = maskedOptions(w);
  return { ...rest, ...redactCredentials(reach ?? {}), shared: w.owner_id === null };
}

const websitesRoutes: FastifyPluginAsync = async (fastify) => {
  async function save(userId: string, id: string, body: WebsiteBody, mustBeNew: boolean): Promise<{ website: Website; created: boolean }> {
    const { proxy, proxies, proxy_rotation, sessions, login, actions, block_patterns, adaptive_throttle, scope, follow_nofollow, only_main_content, downloads, ...given } = body;
    const plain = { ...given, item_fields: normaliseItemFields(given.item_fields) };
    const reach = reachLayer({ proxy, proxies, proxy_rotation, sessions, login, actions, block_patterns, adaptive_throttle, scope, follow_nofollow, only_main_content, downloads });
    checkPatterns(plain);
    checkSelectors(plain);
    // Literal credentials are kept sealed, secrets by name (resolved at each job's creation); the
    // options are checked clear, a header or cookie named by secret as its value (UNKNOWN_SECRET first).
    const box = fastify.secrets;
    const { sealed, clear } = await sealForStorage({ headers: plain.headers, cookies: plain.cookies, ...reach }, { box, lookup: userSecretLookup(fastify.db, box, userId) });
    checkOptions({ ...plain, headers: clear.headers, cookies: clear.cookies }, hostsOf([plain.base_url], plain.allowed_hosts));
    checkReach({ ...reach, include_patterns: plain.include_patterns, exclude_patterns: plain.exclude_patterns });
    const { headers, cookies, ...kept } = sealed;
    const fields = { ...plain, headers, cookies, reach: kept };
    return inTransaction(fastify.db, async (tx) => {
      await lockId(tx, 'website', id);
      const owner = await ownerOf(tx, 'websites', id);
      if (owner === null) throw new ApiError('READ_ONLY_RESOURCE', `website ${id} is shared and read-only`);
      if (owner !== undefined && (owner !== userId || mustBeNew)) throw new ApiError('ID_TAKEN', `website id ${id} is taken`, { field: 'id' });
      const { id: _ignored, ...rest } = fields;
      const website = await upsertWebsite(tx, { ...rest, id, owner_id: userId });
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
