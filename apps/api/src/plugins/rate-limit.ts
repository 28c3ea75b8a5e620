/**
 * Rate limits per API key (in memory, per API instance): all routes share `rateLimitMax` per
 * window, and `POST /crawl` has its own smaller budget because each call may start a crawl.
 * Requests without a well-formed key are limited per client address instead, so rotating made-up
 * keys buys nothing.
 */
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { API_KEY_PATTERN, hashApiKey } from '../data/api-keys.ts';
import { ApiError } from '../errors.ts';
import { presentedKey } from './auth.ts';

export function rateLimitKey(request: FastifyRequest): string {
  const key = presentedKey(request);
  return key && API_KEY_PATTERN.test(key) ? `key:${hashApiKey(key)}` : `ip:${request.ip}`;
}

export default fp(
  async (fastify) => {
    await fastify.register(rateLimit, {
      global: true,
      max: fastify.config.rateLimitMax,
      timeWindow: fastify.config.rateLimitWindowMs,
      keyGenerator: rateLimitKey,
      errorResponseBuilder: (_request, context) =>
        new ApiError('RATE_LIMITED', `rate limit of ${context.max} requests per ${context.after} exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`),
    });
  },
  { name: 'rate-limit', dependencies: ['dependencies'], fastify: '5.x' },
);
