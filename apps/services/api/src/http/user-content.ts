/**
 * How the API serves what a crawl stored (`GET /jobs/:id/pages/:fetch_id/content`): anyone's HTML,
 * from the origin that also serves the web console, so a browser must never run it as the console's.
 *
 * - `Content-Security-Policy: sandbox` (no `allow-scripts`, no `allow-same-origin`): opened in a
 *   browser, the document gets an opaque origin, runs no script, submits no form, opens no popup,
 *   and cannot read the console's storage or call the API with its cookies. `default-src 'none'`
 *   with inline styles and `data:` images only: it loads nothing from elsewhere either (a stored page
 *   viewed is not a beacon to its site, nor a probe of the viewer's network); it shows as stored,
 *   unstyled where its styles were remote. `frame-ancestors 'none'`: no one frames it.
 * - `X-Content-Type-Options: nosniff`: text stays the type it is served as.
 * - `Content-Disposition: attachment` unless the caller asks `inline=true`: a browser saves it
 *   rather than opens it; a program reading the body (the console, the CLI, an SDK) is unaffected.
 */
import type { FastifyReply } from 'fastify';

export const USER_CONTENT_CSP = [
  'sandbox',
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  'img-src data:',
  'font-src data:',
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const EXTENSIONS: Readonly<Record<string, string>> = { html: 'html', text: 'txt', markdown: 'md', screenshot: 'png', pdf: 'pdf' };

/** `<fetch id>.<extension>`, in characters every browser and shell takes as they are. */
export function contentFilename(fetchId: string, format: string): string {
  const base = fetchId.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'content';
  return `${base}.${EXTENSIONS[format] ?? format.replace(/[^A-Za-z0-9]/g, '')}`;
}

/** Sets the headers every stored-content answer carries. */
export function userContentHeaders(reply: FastifyReply, options: { readonly filename: string; readonly inline: boolean }): FastifyReply {
  return reply
    .header('content-security-policy', USER_CONTENT_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('content-disposition', `${options.inline ? 'inline' : 'attachment'}; filename="${options.filename}"`);
}
