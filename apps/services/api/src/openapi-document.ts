/**
 * The API's OpenAPI document without a running stack, as `/docs/json` serves it: the very app
 * main.ts builds (the console mounted), with a Postgres pool that is never asked anything (no
 * API keys are loaded: `apiKeys: 'none'`) and a producer that never sends, read once the app is
 * ready and closed again. `@trawl/client` is generated from it (`npm run --silent openapi -w
 * @trawl/api` prints it), never from this code.
 */
import { createPool } from '@trawl/store';
import { buildApp } from './app.ts';
import { mountServiceExtras } from './service-mount.ts';

export type OpenApiDocument = Record<string, unknown>;

export async function openapiDocument(): Promise<OpenApiDocument> {
  // pg pools connect on the first query; the document needs none.
  const pool = createPool({ applicationName: 'trawl-api-openapi', max: 1 });
  const producer = {
    emit: () => Promise.reject(new Error('the OpenAPI document is built offline: nothing is sent')),
  };
  const app = await buildApp({ pool, producer, mount: mountServiceExtras, apiKeys: 'none' });
  try {
    await app.ready();
    return app.swagger() as unknown as OpenApiDocument;
  } finally {
    await app.close();
    await pool.end();
  }
}
