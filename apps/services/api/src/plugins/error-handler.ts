/**
 * The one place where errors become responses. Whatever is thrown — an ApiError, a schema
 * validation failure, one of Fastify's body-parsing errors, a database outage — the client gets
 * `{ error: { code, message, field? } }` with a code from the catalogue (errors.ts). Anything
 * unexpected is a 500 `INTERNAL` whose details stay in the log, never in the response.
 */
import fp from 'fastify-plugin';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { QuotaExceededError } from '@trawl/store';
import { UnknownSecretError } from '@trawl/store/secrets';
import { ApiError } from '../errors.ts';
import { validationToApiError } from '../http/validation-error.ts';

/** Fastify's own client errors, by their code. */
const FASTIFY_CODES: Readonly<Record<string, ApiError['code']>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
};

/** Connection-level failures of Postgres (node errors, admin shutdown, too many clients, pool timeouts). */
const PG_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300', '08006', '08001', '08003']);

function isDatabaseOutage(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && PG_UNAVAILABLE.has(code)) return true;
  const message = (err as Error).message ?? '';
  return /timeout exceeded when trying to connect|Connection terminated/i.test(message);
}

/** A quota refusal from the store: a cadence too frequent is the request's fault (400), the rest wait for room (429). */
export function quotaError(err: QuotaExceededError): ApiError {
  const limit = { name: err.limit, value: err.value, used: err.used };
  return err.limit === 'min_interval_seconds'
    ? new ApiError('INTERVAL_TOO_SHORT', err.message, { field: 'interval', limit, cause: err })
    : new ApiError('QUOTA_EXCEEDED', err.message, { limit, cause: err });
}

export function toApiError(err: FastifyError | Error): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof QuotaExceededError) return quotaError(err);
  // A credential naming a secret the caller does not have (another user's is unknown too).
  if (err instanceof UnknownSecretError) return new ApiError('UNKNOWN_SECRET', err.message, { field: err.field, cause: err });
  const fe = err as FastifyError;
  if (fe.validation) return validationToApiError(fe.validation, fe.validationContext);
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return new ApiError(mapped, fe.message, { cause: err });
  if (isDatabaseOutage(err)) return new ApiError('DEPENDENCY_UNAVAILABLE', 'the database is not answering; retry later', { cause: err });
  if (fe.code === '57014') {
    // The pool's statement timeout (TRAWL_PG_STATEMENT_TIMEOUT_MS) cancelled a query: nothing was changed.
    return new ApiError('DEPENDENCY_UNAVAILABLE', 'the database did not answer in time; retry later', { cause: err });
  }
  if (fe.code === '42P01') {
    // A read-model table is missing: projector-pg has not set them up yet (or a replay is swapping).
    return new ApiError('DEPENDENCY_UNAVAILABLE', 'the read models are not there yet (is projector-pg running?); retry later', { cause: err });
  }
  // Other 4xx raised by Fastify or its parsers (e.g. a prototype-poisoning body) keep their message.
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError('BAD_REQUEST', fe.message, { cause: err });
  }
  return new ApiError('INTERNAL', 'internal error', { cause: err });
}

function sendError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const apiError = toApiError(err);
  // An hourly limit (webhook tests and re-deliveries) knows when room comes back.
  if (err instanceof QuotaExceededError && err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
  if (apiError.statusCode >= 500) request.log.error({ err }, apiError.message);
  else request.log.info({ code: apiError.code, field: apiError.field }, apiError.message);
  // Headers such as retry-after set by the rate limiter stay on the reply.
  return reply.code(apiError.statusCode).type('application/json; charset=utf-8').send(apiError.toBody());
}

/**
 * Fastify's `frameworkErrors` server option (app.ts): the router's own refusals — a path that is
 * not valid percent-encoding (`/jobs/%/status`), a parameter longer than `maxParamLength` — never
 * reach the error handler, and would otherwise answer in Fastify's shape, not the API's.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void sendError(err, request, reply);
}

export default fp(
  async (fastify) => {
    fastify.setErrorHandler(sendError);
    fastify.setNotFoundHandler((request, reply) => {
      const err = new ApiError('ROUTE_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`);
      return reply.code(err.statusCode).send(err.toBody());
    });
  },
  { name: 'error-handler', fastify: '5.x' },
);
