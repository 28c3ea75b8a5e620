/**
 * Bearer API keys. `fastify.authenticate` is an onRequest hook for the routes that need a user;
 * it sets `request.userId`, the only identity every query is scoped by.
 *
 * Browsers cannot set headers on a WebSocket or an EventSource, so the routes that serve those
 * (`config.allowQueryToken`) also take `?access_token=`; the request serializer in app.ts keeps it
 * out of the logs.
 *
 * Validated keys are cached for `keyCacheMs` (revocation takes that long to bite) so that a busy
 * client costs no Postgres round trip per request; unknown keys are never cached.
 */
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PATTERN, hashApiKey, userForApiKey } from '../data/api-keys.ts';
import { ApiError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
  interface FastifyRequest {
    /** The API key's owner; set by `authenticate`. */
    userId: string;
  }
  interface FastifyContextConfig {
    /** Accept the key as `?access_token=` too (WebSocket, EventSource). */
    allowQueryToken?: boolean;
  }
}

const MAX_CACHED_KEYS = 10_000;

/** The key a request presents, or undefined. Exported for the rate limiter's key generator. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1];
  }
  if (request.routeOptions.config?.allowQueryToken) {
    const token = (request.query as { access_token?: unknown } | undefined)?.access_token;
    if (typeof token === 'string') return token;
  }
  return undefined;
}

export default fp(
  async (fastify) => {
    const cache = new Map<string, { userId: string; until: number }>();
    const ttl = fastify.config.keyCacheMs;

    async function lookup(key: string): Promise<string | undefined> {
      const hash = hashApiKey(key);
      const hit = cache.get(hash);
      if (hit && hit.until > Date.now()) return hit.userId;
      const userId = await userForApiKey(fastify.db, key);
      if (userId && ttl > 0) {
        if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value!);
        cache.set(hash, { userId, until: Date.now() + ttl });
      } else {
        cache.delete(hash);
      }
      return userId;
    }

    fastify.decorateRequest('userId', '');
    fastify.decorate('authenticate', async (request: FastifyRequest) => {
      const key = presentedKey(request);
      if (!key) throw new ApiError('UNAUTHENTICATED', 'missing API key: send "Authorization: Bearer <key>"');
      const userId = API_KEY_PATTERN.test(key) ? await lookup(key) : undefined;
      if (!userId) throw new ApiError('UNAUTHENTICATED', 'unknown or revoked API key');
      request.userId = userId;
    });
  },
  { name: 'auth', dependencies: ['dependencies'], fastify: '5.x' },
);
