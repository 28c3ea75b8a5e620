/** `GET /me`: who the presented key belongs to; the console's sign-in checks a key with it. */
import '../host-app.ts';
import type { FastifyPluginAsync } from 'fastify';
import { errorResponses } from './error-responses.ts';

const meRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get(
    '/me',
    {
      schema: {
        tags: ['console'],
        summary: "The API key's user",
        response: { 200: { type: 'object', required: ['user_id'], properties: { user_id: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request) => ({ user_id: request.userId }),
  );
};

export default meRoutes;
