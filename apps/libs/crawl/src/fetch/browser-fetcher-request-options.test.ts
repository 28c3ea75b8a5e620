/**
 * Request options in the worker's Chromium: the same site gate as over HTTP (header, cookie, user
 * agent, Accept-Language), the page's own view of them (navigator, document.cookie, Intl), and
 * no cookie of one render left for the next.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestProfileOf } from '../request/request-profile.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { BrowserFetcher } from './browser-fetcher.ts';

const OPTIONS = { headers: { 'X-Api-Key': 'k-123' }, user_agent: 'GateBot/1.0', locale: 'fr-CH', cookies: { '127.0.0.1': ['consent=yes; Path=/'] } };

const PAGE = `<!doctype html><html><body><p id="out"></p><script>
document.getElementById('out').textContent = [navigator.userAgent, navigator.language, document.cookie, Intl.DateTimeFormat().resolvedOptions().locale].join('|');
</script></body></html>`;

let site: LocalServer;
let browser: BrowserFetcher;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  site = await startLocalServer({
    '/gated': (q, r) => {
      seen.push(q.headers);
      const h = q.headers;
      const ok = h['x-api-key'] === 'k-123' && h['user-agent'] === 'GateBot/1.0' && h['accept-language']?.startsWith('fr-CH,fr') && /consent=yes/.test(h.cookie ?? '');
      r.writeHead(ok ? 200 : 403, { 'content-type': 'text/html' }).end(ok ? PAGE : '<p>go away</p>');
    },
    '/open': (q, r) => (seen.push(q.headers), r.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)),
  });
  browser = await BrowserFetcher.launch({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), concurrency: 1, navigationTimeoutMs: 10_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

describe('the browser fetcher with request options', () => {
  it('sends the header, user agent, Accept-Language and cookie, and the page sees its locale and cookie', async () => {
    const r = await browser.fetch(`${site.origin}/gated`, { request: requestProfileOf(testSpec(OPTIONS)), waitForSelector: '#out:not(:empty)' });
    expect(r.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({ 'x-api-key': 'k-123', 'user-agent': 'GateBot/1.0', cookie: 'consent=yes' });
    expect(seen.at(-1)!['accept-language']).toMatch(/^fr-CH,fr/);
    expect(r.body).toContain('GateBot/1.0|fr-CH|consent=yes|fr-CH');
  }, 30_000);

  it('leaves nothing of them for the next render without options', async () => {
    const r = await browser.fetch(`${site.origin}/open`, { waitForSelector: '#out:not(:empty)' });
    expect(r.status).toBe(200);
    expect(seen.at(-1)!.cookie).toBeUndefined();
    expect(seen.at(-1)!['x-api-key']).toBeUndefined();
    expect(seen.at(-1)!['user-agent']).toMatch(/^Trawl\//);
    expect(r.body).not.toContain('consent=yes');
    expect(r.body).not.toContain('fr-CH');
    expect((await browser.fetch(`${site.origin}/gated`)).status).toBe(403);
  }, 30_000);
});
