import { gzipSync } from 'node:zlib';
import { html, serve, type RunningServer } from './serve.ts';

export interface SitemapSiteOptions {
  /** Pages listed by the gzip sitemap (`/p/0` …). */
  readonly pages?: number;
  /** URLs of the big sitemap (`/big/0` …): 50,000 is the most sitemaps.org allows one document. */
  readonly bigUrls?: number;
  /** What the gzip bomb inflates to (a few URLs, then spaces). */
  readonly bombBytes?: number;
  readonly port?: number;
}

/**
 * A site whose pages are mostly found through its sitemaps, every kind a crawler meets:
 *
 *     /robots.txt          Sitemap: /sitemap-index.xml, and one on another host (localhost)
 *     /sitemap-index.xml   index → pages.xml.gz, nested-index.xml, a private address (10.0.0.1),
 *                          broken.xml, bomb.xml.gz, missing.xml (404)
 *     pages.xml.gz         a gzip file (not Content-Encoding): /p/0 … plus one URL off-host, one at
 *                          a private address and /p/excluded (for an exclude pattern)
 *     nested-index.xml     index → deeper-index.xml (an index one level further: past a nesting
 *                          limit of 2), big.xml (served with Content-Encoding: gzip)
 *     big.xml              `bigUrls` URLs /big/0 …
 *     broken.xml           two URLs, then malformed XML
 *     bomb.xml.gz          one URL, then `bombBytes` of spaces, gzipped to a few hundred KB
 *
 * The home page links to /about alone; every page is a small HTML page without links.
 */
export interface SitemapSite extends RunningServer {
  readonly home: string;
  /** Page URLs the sitemaps offer, in the order a breadth-first reader meets them, before crawl rules and limits. */
  readonly listed: readonly string[];
  /** Of `listed`, those a same-host crawl without patterns keeps (the off-host and private ones left out). */
  readonly sameHost: readonly string[];
  /** URLs listed that a same-host crawl must never request. */
  readonly offHost: readonly string[];
  /** Sitemap documents a reader with a nesting limit of 2 must not fetch (past it, or on another host). */
  readonly neverFetched: readonly string[];
}

export async function createSitemapSite(options: SitemapSiteOptions = {}): Promise<SitemapSite> {
  const pages = options.pages ?? 20;
  const bigUrls = options.bigUrls ?? 50_000;
  const bombBytes = options.bombBytes ?? 64 * 1024 * 1024;
  let origin = '';
  let other = '';
  const urlset = (locs: readonly string[]) => `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs.map((l) => `<url><loc>${l}</loc></url>\n`).join('')}</urlset>\n`;
  const index = (locs: readonly string[]) => `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${locs.map((l) => `<sitemap><loc>${l}</loc></sitemap>\n`).join('')}</sitemapindex>\n`;
  const range = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

  // Built once the port is known (the documents name absolute URLs).
  let docs: Record<string, { body: Buffer; headers: Record<string, string> }> = {};
  const build = () => {
    const xml = { 'content-type': 'application/xml' };
    const pagesList = [...range(pages, (i) => `${origin}/p/${i}`), `${other}/p/off-host`, 'http://10.0.0.1/p/private', `${origin}/p/excluded`];
    const bomb = gzipSync(Buffer.concat([Buffer.from(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url><loc>${origin}/p/bomb-0</loc></url>\n`), Buffer.alloc(bombBytes, 0x20)]), { level: 9 });
    docs = {
      '/sitemap-index.xml': { body: Buffer.from(index([`${origin}/sitemaps/pages.xml.gz`, `${origin}/sitemaps/nested-index.xml`, 'http://10.0.0.1/sitemap.xml', `${origin}/sitemaps/broken.xml`, `${origin}/sitemaps/bomb.xml.gz`, `${origin}/sitemaps/missing.xml`])), headers: xml },
      '/sitemaps/pages.xml.gz': { body: gzipSync(urlset(pagesList)), headers: { 'content-type': 'application/x-gzip' } },
      '/sitemaps/nested-index.xml': { body: Buffer.from(index([`${origin}/sitemaps/deeper-index.xml`, `${origin}/sitemaps/big.xml`])), headers: xml },
      '/sitemaps/deeper-index.xml': { body: Buffer.from(index([`${origin}/sitemaps/too-deep.xml`])), headers: xml },
      '/sitemaps/too-deep.xml': { body: Buffer.from(urlset([`${origin}/p/too-deep`])), headers: xml },
      '/sitemaps/big.xml': { body: gzipSync(urlset(range(bigUrls, (i) => `${origin}/big/${i}`))), headers: { ...xml, 'content-encoding': 'gzip' } },
      '/sitemaps/broken.xml': { body: Buffer.from(`<urlset>\n<url><loc>${origin}/p/broken-0</loc></url>\n<url><loc>${origin}/p/broken-1</loc></url>\n<url><loc>${origin}/p/broken-2</lo></url>\n</urlset>\n`), headers: xml },
      '/sitemaps/bomb.xml.gz': { body: bomb, headers: { 'content-type': 'application/gzip' } },
    };
  };

  const server = await serve((req, res, url) => {
    const path = url.pathname;
    if ((req.headers.host ?? '').startsWith('localhost')) return html(res, 200, '<p>another host: a crawl of 127.0.0.1 never comes here</p>');
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nDisallow: /private/\nSitemap: ${origin}/sitemap-index.xml\nSitemap: ${other}/sitemap-offhost.xml\n`);
      return;
    }
    const doc = docs[path];
    if (doc) {
      res.writeHead(200, { ...doc.headers, 'content-length': String(doc.body.length) }).end(doc.body);
      return;
    }
    if (path === '/') return html(res, 200, '<h1>Home</h1><a href="/about">About</a>');
    if (path === '/about' || /^\/(p|big)\/[\w-]+$/.test(path)) return html(res, 200, `<h1>${path}</h1>`);
    return html(res, 404, '<p>not found</p>');
  }, options.port !== undefined ? { port: options.port } : {});
  origin = server.origin;
  other = `http://localhost:${server.port}`;
  build();

  const listed = [
    ...range(pages, (i) => `${origin}/p/${i}`),
    `${other}/p/off-host`,
    'http://10.0.0.1/p/private',
    `${origin}/p/excluded`,
    `${origin}/p/broken-0`,
    `${origin}/p/broken-1`,
    `${origin}/p/bomb-0`,
    ...range(bigUrls, (i) => `${origin}/big/${i}`),
  ];
  const offHost = [`${other}/p/off-host`, 'http://10.0.0.1/p/private'];
  return {
    ...server,
    home: `${origin}/`,
    listed,
    sameHost: listed.filter((u) => !offHost.includes(u)),
    offHost,
    neverFetched: [`${origin}/sitemaps/too-deep.xml`, `${other}/sitemap-offhost.xml`, 'http://10.0.0.1/sitemap.xml'],
  };
}
