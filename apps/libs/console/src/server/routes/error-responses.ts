/** The error body every console route may answer with (the API's shape), for OpenAPI. */
// Nothing is required: the plugin answers its own errors in this shape, but the host's handler
// writes the rest (the API's is this shape too; a bare Fastify's is not, and must still go out).
export const errorBody = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, field: { type: 'string' } },
    },
  },
} as const;

export const errorResponses = { '4xx': errorBody, '5xx': errorBody } as const;
