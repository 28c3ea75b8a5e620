/**
 * What the service mounts on the API's app beyond the API's own routes: the web console at `/`
 * and its dashboard routes (they authenticate themselves). main.ts serves it and the offline
 * OpenAPI document describes it, so the document is the one `/docs/json` serves.
 */
import type { FastifyInstance } from 'fastify';
import trawlConsole from '@trawl/console';

export function mountServiceExtras(app: FastifyInstance): PromiseLike<unknown> {
  return app.register(trawlConsole);
}
