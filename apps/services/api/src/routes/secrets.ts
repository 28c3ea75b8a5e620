/**
 * A user's secrets (invariant 10): `POST /secrets` creates or replaces one, `GET /secrets` lists
 * names and times, `DELETE /secrets/:name` removes one. Values are write-only — sealed at rest
 * (@trawl/store/secrets user-secrets.ts), never in an answer or a log — and used only by the
 * owner's crawls, which name them as `{ "secret": "<name>" }` in a credential.
 */
import type { FastifyPluginAsync } from 'fastify';
import { deleteUserSecret, listUserSecrets, putUserSecret } from '@trawl/store/secrets';
import { ApiError } from '../errors.ts';
import { errorResponses } from '../schemas/common.ts';
import { secretBody, secretNameParams } from '../schemas/secrets.ts';

const secretsRoutes: FastifyPluginAsync = async (fastify) => {
  const tags = ['secrets'];
  const secretView = { $ref: 'Secret#' };

  fastify.post<{ Body: { name: string; value: string } }>('/secrets', {
    schema: {
      tags,
      summary: 'Create or replace a secret (its value is never returned)',
      body: secretBody,
      response: { 201: secretView, 200: secretView, ...errorResponses('SECRET_TOO_LARGE', 'QUOTA_EXCEEDED') },
    },
  }, async (request, reply) => {
    const { name, value } = request.body;
    const limits = fastify.config.secretLimits;
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > limits.maxValueBytes) {
      throw new ApiError('SECRET_TOO_LARGE', `the value is ${bytes} bytes; at most ${limits.maxValueBytes}`, { field: 'value', limit: { name: 'secret_value_bytes', value: limits.maxValueBytes, used: bytes } });
    }
    const result = await putUserSecret(fastify.db, fastify.secrets, request.userId, name, value, limits);
    if (!result.ok) {
      throw new ApiError('QUOTA_EXCEEDED', `you keep ${result.used} secrets, the most allowed (secrets: ${limits.maxPerUser}); delete one first`, { limit: { name: 'secrets', value: limits.maxPerUser, used: result.used } });
    }
    return reply.code(result.created ? 201 : 200).send(result.secret);
  });

  fastify.get('/secrets', {
    schema: { tags, summary: "The caller's secrets: names and times, never values", response: { 200: { type: 'object', required: ['secrets'], properties: { secrets: { type: 'array', items: secretView } } }, ...errorResponses() } },
  }, async (request) => ({ secrets: await listUserSecrets(fastify.db, request.userId) }));

  fastify.delete<{ Params: { name: string } }>('/secrets/:name', {
    schema: { tags, summary: 'Delete a secret (jobs already submitted keep the value they were given)', params: secretNameParams, response: { 204: { type: 'null', description: 'deleted' }, ...errorResponses('SECRET_NOT_FOUND') } },
  }, async (request, reply) => {
    if (!(await deleteUserSecret(fastify.db, request.userId, request.params.name))) throw new ApiError('SECRET_NOT_FOUND', `secret ${request.params.name} not found`);
    return reply.code(204).send();
  });
};

export default secretsRoutes;
