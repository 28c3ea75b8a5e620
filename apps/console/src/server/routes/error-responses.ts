/** The error body every console route may answer with (the API's shape), for OpenAPI. */
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
