/**
 * Pages that answer only through a proxy, as a site does that blocks a data centre's addresses and
 * lets its customers' proxies in: what `proxy` / `proxies` are for.
 *
 * A request counts as proxied when it carries a `Via` header (an HTTP proxy forwarding it adds one:
 * tinyproxy does) or comes from another address than this machine's loopback 127.0.0.1 / ::1 (the
 * harness's SOCKS proxy connects out from 127.0.0.2: proxies.ts). A direct request gets a 403 page
 * with no items — the same crawl without a proxy ends with every page failed, never with items.
 *
 * `/proxy/` lists {@link PROXY_ONLY_ITEMS} items, each on its own page `/proxy/item/N` as a
 * `div.item` with its title in `.title`; {@link expectedProxyOnly} is what a complete crawl gives.
 */
import type { IncomingMessage } from 'node:http';
import { escapeHtml, html } from '../serve.ts';
import type { HardSiteFeature } from './feature.ts';

export const PROXY_ONLY_ITEMS = 3;

const titles = Array.from({ length: PROXY_ONLY_ITEMS }, (_, i) => `Proxied item ${i + 1}`);

/** What a complete crawl of the feature gives, and how a refused request looks. */
export const expectedProxyOnly = {
  entry: '/proxy/',
  pages: ['/proxy/', ...titles.map((_, i) => `/proxy/item/${i + 1}`)],
  itemSelector: 'div.item',
  titleSelector: '.title',
  titles,
  refusedStatus: 403,
} as const;

const DIRECT = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Whether the request came through a proxy (see the module's comment). */
export function cameThroughProxy(req: IncomingMessage): boolean {
  if (req.headers.via) return true;
  const from = req.socket.remoteAddress ?? '';
  return from !== '' && !DIRECT.has(from);
}

export const proxyOnly: HardSiteFeature = {
  prefix: '/proxy/',
  entry: '/proxy/',
  handle(req, res, url) {
    if (!cameThroughProxy(req)) {
      html(res, expectedProxyOnly.refusedStatus, '<!doctype html><title>Forbidden</title><p>This site answers only through a proxy.</p>');
      return;
    }
    const headers = { 'x-seen-via': String(req.headers.via ?? ''), 'x-seen-from': req.socket.remoteAddress ?? '' };
    if (url.pathname === '/proxy/') {
      const links = titles.map((_, i) => `<li><a href="/proxy/item/${i + 1}">item ${i + 1}</a></li>`).join('');
      html(res, 200, `<!doctype html><title>Proxied list</title><ul>${links}</ul>`, headers);
      return;
    }
    const m = /^\/proxy\/item\/(\d+)$/.exec(url.pathname);
    const n = m ? Number(m[1]) : 0;
    if (n < 1 || n > PROXY_ONLY_ITEMS) {
      html(res, 404, '<!doctype html><title>Not found</title>');
      return;
    }
    html(res, 200, `<!doctype html><title>${escapeHtml(titles[n - 1]!)}</title><div class="item"><h2 class="title">${escapeHtml(titles[n - 1]!)}</h2></div>`, headers);
  },
};
