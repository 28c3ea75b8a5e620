/**
 * JSON schemas shared by routes. They validate requests, serialize responses (fast-json-stringify)
 * and are the OpenAPI document, so each one is written once and means the same in all three.
 */
import { ERROR_CODES, ERRORS, type ErrorCode } from '../errors.ts';

export const errorResponseSchema = {
  $id: 'ErrorResponse',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: ERROR_CODES },
        message: { type: 'string' },
        field: { type: 'string', description: 'the request field at fault, dotted (`start_urls.0`)' },
        limit: {
          type: 'object',
          description: 'the quota refused (QUOTA_EXCEEDED, INTERVAL_TOO_SHORT)',
          properties: { name: { type: 'string' }, value: { type: 'number' }, used: { type: 'number' } },
        },
      },
    },
  },
} as const;

/** Response schemas for the given error codes, grouped by status, with the codes in the description. */
export function errorResponses(...codes: ErrorCode[]): Record<number, object> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ['VALIDATION_FAILED', 'UNAUTHENTICATED', 'RATE_LIMITED', 'INTERNAL', 'DEPENDENCY_UNAVAILABLE', ...codes] as ErrorCode[]) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [status, { description: list.join(', '), $ref: 'ErrorResponse#' }]),
  );
}

/** Ids that users choose (websites, targets, spiders): URL-safe, short. */
export const USER_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$';

export const jobIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid', description: 'job id' } },
} as const;

export const userIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: USER_ID_PATTERN } },
} as const;

export const uuidParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', format: 'uuid' } },
} as const;

export const limitProperty = { type: 'integer', minimum: 1, maximum: 500, default: 50 } as const;
export const cursorProperty = { type: 'string', maxLength: 200, description: 'opaque; `next_cursor` of the previous page' } as const;

export const nullableString = { type: ['string', 'null'] } as const;
export const nullableInteger = { type: ['integer', 'null'] } as const;
export const nullableDate = { type: ['string', 'null'], format: 'date-time' } as const;
