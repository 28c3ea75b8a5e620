/**
 * Bearer API keys. `fastify.authenticate` is an onRequest hook for the routes that need a user;
 * it sets `request.userId`, the only identity every query is scoped by.
 *
 * Browsers cannot set headers on a WebSocket or an EventSource, so the routes that serve those
 * (`config.allowQueryToken`) also take `?access_token=`; the request serializer in app.ts keeps it
 * out of the logs.
 *
 * What a key costs Postgres, and who pays:
 * - A validated key is trusted for `keyCacheMs` (revocation takes that long to bite), so a busy
 *   client costs no round trip per request.
 * - A key found unknown is answered 401 from memory for `unknownKeyCacheMs`, and concurrent
 *   requests with one uncached key share one lookup.
 * - Every failed authentication (no key, a malformed one, an unknown one) counts against the
 *   client address's `authFailureLimit`; a lookup is paid for up front from that budget and given
 *   back when the key turns out good. An address whose budget is spent gets 429 and its keys are
 *   not looked up: a flood of made-up keys from one address costs Postgres at most
 *   `authFailureLimit` lookups per window. Cached good keys from that address still work.
 */
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PATTERN, hashApiKey, userForApiKey } from '../data/api-keys.ts';
import { ApiError } from '../errors.ts';
import { clientAddressKey } from '../limits/client-address.ts';

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** The key's user when the request carries a good key, else undefined; never throws for a bad key. */
    identify: (request: FastifyRequest, reply: FastifyReply) => Promise<string | undefined>;
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

/** A bounded map of hash → (value, expiry); the oldest entry goes first when it is full. */
class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly max: number) {}

  get(key: string, now: number): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > now) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, until: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until });
  }
}

export default fp(
  async (fastify) => {
    const { keyCacheMs, unknownKeyCacheMs } = fastify.config;
    const known = new ExpiringCache<string>(MAX_CACHED_KEYS);
    const unknown = new ExpiringCache<true>(MAX_CACHED_KEYS);
    const inFlight = new Map<string, Promise<string | undefined>>();

    /** Counts a failed authentication against the address: 401, or 429 once its budget is spent. */
    function failed(reply: FastifyReply, address: string, message: string): never {
      const take = fastify.limits.authFailures.take(address);
      if (!take.allowed) fastify.limits.refuse(reply, take, `limit of ${fastify.limits.authFailures.max} failed authentications from one address`);
      throw new ApiError('UNAUTHENTICATED', message);
    }

    function lookup(hash: string, key: string): Promise<string | undefined> {
      const pending = userForApiKey(fastify.db, key).finally(() => inFlight.delete(hash));
      inFlight.set(hash, pending);
      return pending;
    }

    async function userOf(request: FastifyRequest, reply: FastifyReply): Promise<string> {
      const address = clientAddressKey(request.ip);
      const key = presentedKey(request);
      if (!key) failed(reply, address, 'missing API key: send "Authorization: Bearer <key>"');
      if (!API_KEY_PATTERN.test(key)) failed(reply, address, 'unknown or revoked API key');
      const hash = hashApiKey(key);
      const now = Date.now();
      const cached = known.get(hash, now);
      if (cached) return cached;
      if (unknown.get(hash, now)) failed(reply, address, 'unknown or revoked API key');
      const running = inFlight.get(hash);
      if (running) {
        // Another request is looking this key up and has paid for it: share its answer.
        const userId = await running;
        if (!userId) failed(reply, address, 'unknown or revoked API key');
        return userId;
      }
      // Paid for up front, so that many concurrent made-up keys cannot all get through to Postgres.
      const take = fastify.limits.authFailures.take(address);
      if (!take.allowed) fastify.limits.refuse(reply, take, `limit of ${fastify.limits.authFailures.max} failed authentications from one address`);
      const userId = await lookup(hash, key);
      if (!userId) {
        if (unknownKeyCacheMs > 0) unknown.set(hash, true, Date.now() + unknownKeyCacheMs);
        throw new ApiError('UNAUTHENTICATED', 'unknown or revoked API key');
      }
      fastify.limits.authFailures.give(address);
      if (keyCacheMs > 0) known.set(hash, userId, Date.now() + keyCacheMs);
      return userId;
    }

    fastify.decorateRequest('userId', '');
    fastify.decorate('authenticate', async (request: FastifyRequest, reply: FastifyReply) => {
      request.userId = await userOf(request, reply);
    });
    fastify.decorate('identify', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!presentedKey(request)) return undefined;
      try {
        return await userOf(request, reply);
      } catch (err) {
        if (err instanceof ApiError && err.code === 'UNAUTHENTICATED') return undefined;
        throw err;
      }
    });
  },
  { name: 'auth', dependencies: ['dependencies', 'rate-limit'], fastify: '5.x' },
);
