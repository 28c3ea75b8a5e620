/**
 * Turns Ajv's first error into the API's 400: a dotted `field` (`start_urls.0`) and a message a
 * person can act on ("depth must be <= 10", "unknown field \"foo\"").
 */
import type { FastifySchemaValidationError, SchemaErrorDataVar } from 'fastify/types/schema.js';
import { ApiError } from '../errors.ts';

function pathToField(instancePath: string): string {
  return instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function join(a: string, b: string): string {
  return a ? `${a}.${b}` : b;
}

export function validationToApiError(errors: readonly FastifySchemaValidationError[], context: SchemaErrorDataVar | undefined): ApiError {
  const first = errors[0];
  if (!first) return new ApiError('VALIDATION_FAILED', 'invalid request');
  const params = first.params as Record<string, unknown>;
  let field = pathToField(first.instancePath);
  let message: string;
  switch (first.keyword) {
    case 'required':
      field = join(field, String(params.missingProperty));
      message = `${field} is required`;
      break;
    case 'additionalProperties':
      field = join(field, String(params.additionalProperty));
      message = `unknown field "${field}"`;
      break;
    case 'format':
      message = params.format === 'http-url' ? `${field} must be an absolute http or https URL` : `${field} must be a valid ${String(params.format)}`;
      break;
    default:
      message = `${field || context || 'request'} ${first.message ?? 'is invalid'}`;
  }
  const where = context && context !== 'body' ? ` (in ${context})` : '';
  // A missing or unknown property is named even when its name is empty (`{"": 1}`).
  const named = field !== '' || first.keyword === 'required' || first.keyword === 'additionalProperties';
  return new ApiError('VALIDATION_FAILED', message + where, named ? { field } : {});
}
