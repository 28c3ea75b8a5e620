/**
 * Schema validation with two Ajv instances. Bodies are JSON, so they are validated as sent: no
 * type coercion ("3" is not a depth) and unknown fields are refused, not silently removed
 * (Fastify's default `removeAdditional` would drop them). Query strings and path parameters are
 * text by nature, so there numbers and booleans are coerced. Everywhere, a string (or a key) holding
 * U+0000 is refused: Postgres text and jsonb cannot store it, so it would otherwise fail as a 500.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the callable may sit one level down.
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

/** Absolute http(s) URLs only: a crawler has no business with file:, javascript: or ftp:. */
export function isHttpUrl(value: string): boolean {
  if (value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: false, ...options });
  addFormats(ajv, ['date-time', 'uuid', 'uri']);
  ajv.addFormat('http-url', { type: 'string', validate: isHttpUrl });
  // OpenAPI annotations that Ajv does not know.
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

/** The JSON pointer of the first string or key holding U+0000, or undefined. */
function nulAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (key.includes('\u0000')) return at;
    const inner = nulAt(item, at);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** `validate`, then the NUL check, reporting like Ajv so that validation-error.ts names the field. */
function refusingNul(validate: ValidateFunction): (data: unknown) => boolean {
  const check = (data: unknown): boolean => {
    if (!validate(data)) {
      check.errors = validate.errors;
      return false;
    }
    const at = nulAt(data);
    check.errors = at === undefined ? null : [{ keyword: 'nul', instancePath: at, schemaPath: '#', params: {}, message: 'must not contain U+0000' }];
    return at === undefined;
  };
  check.errors = null as ErrorObject[] | null | undefined;
  return check;
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const body = makeAjv({ coerceTypes: false, removeAdditional: false });
  const text = makeAjv({ coerceTypes: 'array', removeAdditional: false });
  return ({ schema, httpPart }) => refusingNul((httpPart === 'body' ? body : text).compile(schema as object));
}
