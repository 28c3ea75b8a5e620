/** Users' secrets: the request body and the view (names and times, never a value). */
import { SECRET_NAME_PATTERN } from '@trawl/store/secrets';

export const secretName = { type: 'string', pattern: SECRET_NAME_PATTERN, description: 'letters, digits, `_`, `.`, `-`; at most 64 characters' } as const;

export const secretBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'value'],
  properties: {
    name: secretName,
    // The byte limit (TRAWL_SECRETS_MAX_VALUE_BYTES) is checked by the route: it is configurable and counts UTF-8 bytes.
    value: { type: 'string', minLength: 1, description: 'write-only: sealed at rest, never returned, never logged; at most `TRAWL_SECRETS_MAX_VALUE_BYTES` (8 KiB) in UTF-8' },
  },
} as const;

export const secretNameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: secretName },
} as const;

export const secretView = {
  $id: 'Secret',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'created_at', 'updated_at'],
  properties: {
    name: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;
