/**
 * Scrape targets: a website plus what to search (a URL template filled from keywords and
 * location). Deleting one deactivates it and cancels its schedules (rows stay for history).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { deleteTarget, getTarget, getWebsite, inTransaction, listTargets, searchUrl, upsertTarget, type Target } from '@trawl/store';
import { lockId, ownerOf } from '../data/ownership.ts';
import { ApiError, notFound } from '../errors.ts';
import { isHttpUrl } from '../http/validators.ts';
import { errorResponses, userIdParams } from '../schemas/common.ts';
import { targetBody } from '../schemas/configuration.ts';

type TargetBody = Omit<Target, 'id' | 'owner_id'> & { id?: string };

function toView(t: Target) {
  return { ...t, search_url: searchUrl(t) };
}

const targetsRoutes: FastifyPluginAsync = async (fastify) => {
  async function save(userId: string, id: string, body: TargetBody, mustBeNew: boolean): Promise<{ target: Target; created: boolean }> {
    if (!isHttpUrl(searchUrl({ ...body, keywords: ['k'], location: 'l' }))) {
      throw new ApiError('VALIDATION_FAILED', 'url_template must give an absolute http or https URL', { field: 'url_template' });
    }
    const website = await getWebsite(fastify.db, body.website_id);
    if (!website || (website.owner_id !== null && website.owner_id !== userId)) {
      throw new ApiError('UNKNOWN_WEBSITE', `website ${body.website_id} is not one you can use`, { field: 'website_id' });
    }
    return inTransaction(fastify.db, async (tx) => {
      await lockId(tx, 'target', id);
      const owner = await ownerOf(tx, 'targets', id);
      if (owner !== undefined && (owner !== userId || mustBeNew)) throw new ApiError('ID_TAKEN', `target id ${id} is taken`, { field: 'id' });
      const { id: _ignored, ...fields } = body;
      return { target: await upsertTarget(tx, { ...fields, id, owner_id: userId }), created: owner === undefined };
    });
  }

  async function own(id: string, userId: string): Promise<Target> {
    const t = await getTarget(fastify.db, id);
    if (!t || t.owner_id !== userId) throw notFound('TARGET_NOT_FOUND', id);
    return t;
  }

  const one = { $ref: 'Target#' };

  fastify.get('/targets', {
    schema: {
      tags: ['targets'],
      summary: "The caller's targets",
      response: { 200: { type: 'object', required: ['targets'], properties: { targets: { type: 'array', items: one } } }, ...errorResponses() },
    },
  }, async (request) => ({ targets: (await listTargets(fastify.db, request.userId)).map(toView) }));

  fastify.get<{ Params: { id: string } }>('/targets/:id', {
    schema: { tags: ['targets'], summary: 'One target', params: userIdParams, response: { 200: one, ...errorResponses('TARGET_NOT_FOUND') } },
  }, async (request) => toView(await own(request.params.id, request.userId)));

  fastify.post<{ Body: TargetBody }>('/targets', {
    schema: { tags: ['targets'], summary: 'Create a target', body: targetBody, response: { 201: one, ...errorResponses('ID_TAKEN', 'UNKNOWN_WEBSITE') } },
  }, async (request, reply) => {
    const { target } = await save(request.userId, request.body.id ?? randomUUID(), request.body, true);
    return reply.code(201).send(toView(target));
  });

  fastify.put<{ Params: { id: string }; Body: TargetBody }>('/targets/:id', {
    schema: {
      tags: ['targets'],
      summary: 'Create or replace one of your targets',
      params: userIdParams,
      body: targetBody,
      response: { 200: one, 201: one, ...errorResponses('ID_TAKEN', 'UNKNOWN_WEBSITE') },
    },
  }, async (request, reply) => {
    if (request.body.id !== undefined && request.body.id !== request.params.id) {
      throw new ApiError('VALIDATION_FAILED', 'id in the body differs from the id in the path', { field: 'id' });
    }
    const { target, created } = await save(request.userId, request.params.id, request.body, false);
    return reply.code(created ? 201 : 200).send(toView(target));
  });

  fastify.delete<{ Params: { id: string } }>('/targets/:id', {
    schema: {
      tags: ['targets'],
      summary: 'Deactivate a target and cancel its schedules',
      params: userIdParams,
      response: { 204: { type: 'null', description: 'deleted' }, ...errorResponses('TARGET_NOT_FOUND') },
    },
  }, async (request, reply) => {
    if (!(await deleteTarget(fastify.db, request.params.id, request.userId))) throw notFound('TARGET_NOT_FOUND', request.params.id);
    return reply.code(204).send();
  });
};

export default targetsRoutes;
