import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHardSite, type HardSite } from './index.ts';
import { expectedLinkRules, LINK_RULES_HOSTS } from './link-rules.ts';

let site: HardSite;
beforeAll(async () => {
  site = await createHardSite();
});
afterAll(async () => {
  await site?.close();
});

/** GET `path` from the site with the Host header a crawler sends for `host`. */
function get(host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: site.port, path, headers: { host: `${host}:${site.port}` } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hard site: link rules', () => {
  it('serves the entry with its nofollow, canonical and cross-host links, on the port it was asked on', async () => {
    const entry = await get(LINK_RULES_HOSTS.site, '/links/');
    expect(entry.status).toBe(200);
    expect(entry.body).toContain('<a rel="nofollow" href="/links/nofollow">');
    expect(entry.body).toContain(`href="http://${LINK_RULES_HOSTS.blog}:${site.port}/links/blog"`);
    expect(entry.body).toContain(`href="http://${LINK_RULES_HOSTS.other}:${site.port}/links/other"`);
    expect((await get(LINK_RULES_HOSTS.site, '/links/item/2?ref=feed')).body).toContain('<link rel="canonical" href="/links/item/2">');
    expect((await get(LINK_RULES_HOSTS.site, '/links/robots-nofollow')).body).toContain('<meta name="robots" content="index, nofollow">');
  });

  it("answers the blog and the other site only on their own names, the site's pages on any other", async () => {
    expect((await get(LINK_RULES_HOSTS.blog, '/links/blog')).status).toBe(200);
    expect((await get(LINK_RULES_HOSTS.site, '/links/blog')).status).toBe(404);
    expect((await get(LINK_RULES_HOSTS.other, '/links/other')).status).toBe(200);
    expect((await get(LINK_RULES_HOSTS.blog, '/links/other')).status).toBe(404);
    expect((await get('127.0.0.1', '/links/item/1')).status).toBe(200);
    expect((await get(LINK_RULES_HOSTS.other, '/links/item/1')).status).toBe(404);
  });

  it('expects more pages and items as each option opens more, and each item once when the canonical is honoured', () => {
    const narrow = expectedLinkRules(8090, { scope: 'same_host', follow_nofollow: false, honour_canonical: true });
    const wide = expectedLinkRules(8090, { scope: 'any', follow_nofollow: true, honour_canonical: true });
    expect(narrow.urls.every((u) => wide.urls.includes(u))).toBe(true);
    expect(wide.urls.length - narrow.urls.length).toBe(4);
    expect(new Set(wide.titles).size).toBe(wide.titles.length);
    expect(expectedLinkRules(8090, { scope: 'any', follow_nofollow: true, honour_canonical: false }).titles.filter((t) => t === 'Item 1')).toHaveLength(2);
  });
});
