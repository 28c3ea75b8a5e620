/**
 * Rate limits, in memory per API instance, checked before anything costs a query.
 *
 * - Every request: `rateLimitMax` per window per API key (by its hash), or per client address when
 *   it carries no well-formed key. This runs in the root `onRequest` hook, ahead of
 *   authentication, so a request over the limit never reaches Postgres.
 * - `POST /crawl` (`config.rateLimit: 'crawl'`): `crawlRateLimitMax` per key on top, because each
 *   call may start a crawl.
 * - Failed authentications: `authFailureLimit` per client address (auth.ts). A made-up key is
 *   well-formed and gets a fresh per-key budget every time, so the per-key limit alone would let an
 *   address try keys for ever; the address's failure budget slows that down. (A made-up key costs
 *   no query: keys are looked up in memory. A valid key never counts against it.)
 *
 * - `/readyz` (`config.rateLimit: 'health'`): `healthRateLimitMax` per client address, and nothing
 *   else; a key buys no fresh budget. Past it the call is not refused — a load balancer's probes
 *   share the address of every client behind it, and a 429 would take the instance out of rotation
 *   — but answered from the last round of checks, whatever its age, so a burst costs the backends
 *   nothing (routes/operations.ts). `/healthz` touches nothing and is not limited.
 *
 * - Open streams: `maxStreamsPerUser` SSE log streams and WebSocket feeds together per user
 *   (limits/stream-slots.ts), taken by the routes that open them.
 *
 * Client addresses are IPv4 addresses or IPv6 /64s (limits/client-address.ts), from the socket, or
 * from `X-Forwarded-For` as far as `TRAWL_API_TRUST_PROXY` trusts it.
 */
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PATTERN, hashApiKey } from '../data/api-keys.ts';
import { ApiError } from '../errors.ts';
import { clientAddressKey } from '../limits/client-address.ts';
import { StreamSlots } from '../limits/stream-slots.ts';
import { WindowCounter, type Take } from '../limits/window-counter.ts';
import { presentedKey } from './auth.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** A `/readyz` call past its address's health budget: answered from the last round of checks. */
    overHealthBudget?: boolean;
  }
  interface FastifyInstance {
    limits: {
      readonly requests: WindowCounter;
      readonly crawls: WindowCounter;
      readonly authFailures: WindowCounter;
      readonly health: WindowCounter;
      /** Open SSE streams and WebSocket feeds per user. */
      readonly streams: StreamSlots;
      /** Takes a stream slot for the user, or throws 429 TOO_MANY_STREAMS; returns its release. */
      stream(userId: string): () => void;
      /** Answers 429 RATE_LIMITED for a refused take (throws), with `retry-after`. */
      refuse(reply: FastifyReply, take: Take, what: string): never;
    };
  }
  interface FastifyContextConfig {
    /** `false`: not limited (metrics); `'crawl'`: the crawl budget too; `'health'`: the health budget only, per address. */
    rateLimit?: false | 'crawl' | 'health';
  }
}

/** The budget a request counts against: its key's, else its client address's. */
export function rateLimitKey(request: FastifyRequest): string {
  const key = presentedKey(request);
  return key && API_KEY_PATTERN.test(key) ? `key:${hashApiKey(key)}` : `ip:${clientAddressKey(request.ip)}`;
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

export default fp(
  async (fastify) => {
    const { rateLimitMax, crawlRateLimitMax, rateLimitWindowMs, authFailureLimit, healthRateLimitMax } = fastify.config;
    const windowText = `${seconds(rateLimitWindowMs)} s`;
    const limits = {
      requests: new WindowCounter({ max: rateLimitMax, windowMs: rateLimitWindowMs }),
      crawls: new WindowCounter({ max: crawlRateLimitMax, windowMs: rateLimitWindowMs }),
      authFailures: new WindowCounter({ max: authFailureLimit, windowMs: rateLimitWindowMs }),
      health: new WindowCounter({ max: healthRateLimitMax, windowMs: rateLimitWindowMs }),
      streams: new StreamSlots(fastify.config.maxStreamsPerUser),
      stream(userId: string): () => void {
        const release = limits.streams.acquire(userId);
        if (!release) {
          throw new ApiError('TOO_MANY_STREAMS', `you have ${limits.streams.max} log streams and live feeds open (the most one user may); close one first`);
        }
        return release;
      },
      refuse(reply: FastifyReply, take: Take, what: string): never {
        const retry = seconds(take.resetAt - Date.now());
        reply.header('retry-after', String(retry));
        throw new ApiError('RATE_LIMITED', `${what} per ${windowText} exceeded; retry in ${retry} s`);
      },
    };
    fastify.decorate('limits', limits);

    fastify.addHook('onRequest', async (request, reply) => {
      const config = request.routeOptions.config;
      if (config?.rateLimit === false) return;
      if (config?.rateLimit === 'health') {
        // Not refused (a load balancer's probes share the address of everyone behind it): past the
        // budget, /readyz answers from its last round, whatever its age, and costs no check.
        request.overHealthBudget = !limits.health.take(clientAddressKey(request.ip)).allowed;
        return;
      }
      const key = rateLimitKey(request);
      const take = limits.requests.take(key);
      reply.header('x-ratelimit-limit', String(rateLimitMax));
      reply.header('x-ratelimit-remaining', String(take.remaining));
      reply.header('x-ratelimit-reset', String(seconds(take.resetAt - Date.now())));
      if (!take.allowed) limits.refuse(reply, take, `rate limit of ${rateLimitMax} requests`);
      if (config?.rateLimit === 'crawl') {
        const crawl = limits.crawls.take(key);
        if (!crawl.allowed) limits.refuse(reply, crawl, `rate limit of ${crawlRateLimitMax} crawl requests`);
      }
    });
  },
  { name: 'rate-limit', dependencies: ['dependencies'], fastify: '5.x' },
);
