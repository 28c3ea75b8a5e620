/**
 * The console's page and its assets, public (the page asks for the key itself). Asset names carry
 * a content hash, so they are cached for good; the page is revalidated, so a new build is picked
 * up on reload. The content security policy allows nothing from elsewhere: the console works with
 * no network beyond the API.
 */
import { extname } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { CONTENT_TYPES, type ConsoleAssets } from '../assets/console-assets.ts';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const ASSET_NAME = /^[A-Za-z0-9._-]{1,100}$/;

const assetRoutes: FastifyPluginAsync<{ assets: ConsoleAssets }> = async (fastify, { assets }) => {
  const page = async (_request: unknown, reply: FastifyReply) => {
    const { index } = await assets.load();
    return reply
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(index);
  };
  const hidden = { schema: { hide: true } };
  fastify.get('/', hidden, page);
  fastify.get('/console', hidden, page);

  fastify.get<{ Params: { file: string } }>('/assets/:file', hidden, async (request, reply) => {
    const { file } = request.params;
    const { files } = await assets.load();
    const body = ASSET_NAME.test(file) ? files.get(file) : undefined;
    if (!body) return reply.callNotFound();
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .type(CONTENT_TYPES[extname(file)] ?? 'application/octet-stream')
      .send(body);
  });
};

export default assetRoutes;
