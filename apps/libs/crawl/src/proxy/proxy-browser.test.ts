/**
 * Chromium through real upstream proxies (tinyproxy with credentials, microsocks): the hard site's
 * proxy-only pages render, each proven proxied by the proxy's own log (and the page answering at
 * all: it refuses direct requests), the upstream's credentials never given to Chromium, and a
 * tenant's proxy on a forbidden address refused before the render.
 */
import { createHardSite, expectedProxyOnly, startHttpProxy, startSocksProxy, type HardSite, type RunningProxy } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsafeAddressError } from '../errors.ts';
import { BrowserFetcher } from '../fetch/browser-fetcher.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalServer } from '../testing/local-server.ts';
import { ProxyPools, type ProxyEndpoint } from './proxy-pool.ts';

const CREDS = { username: 'render', password: 'br0wser-pass' };
let site: HardSite;
let tiny: RunningProxy;
let socks: RunningProxy;
let browser: BrowserFetcher;

function endpoint(proxy: RunningProxy): ProxyEndpoint {
  const c = proxy.credentials;
  return new ProxyPools().pick('job', { proxies: [{ url: proxy.url, username: c?.username ?? null, password: c?.password ?? null }], proxy_rotation: 'round_robin' })!.proxy;
}

beforeAll(async () => {
  [site, tiny, socks] = await Promise.all([createHardSite(), startHttpProxy({ credentials: CREDS }), startSocksProxy()]);
  browser = await BrowserFetcher.launch({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), concurrency: 1, navigationTimeoutMs: 10_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([site, tiny, socks].map((s) => s?.close()));
});

describe('BrowserFetcher through upstream proxies', () => {
  it('renders the proxy-only page direct as refused', async () => {
    const r = await browser.fetch(`${site.origin}/proxy/item/1`);
    expect(r.status).toBe(expectedProxyOnly.refusedStatus);
  });

  it('renders through tinyproxy with credentials: the proxy logs the request, the page answers', async () => {
    const r = await browser.fetch(`${site.origin}/proxy/item/1`, { proxy: endpoint(tiny) });
    expect(r.status).toBe(200);
    expect(r.body).toContain(expectedProxyOnly.titles[0]);
    expect(tiny.log()).toContain(`GET ${site.origin}/proxy/item/1`);
  });

  it('renders through microsocks', async () => {
    const r = await browser.fetch(`${site.origin}/proxy/item/2`, { proxy: endpoint(socks) });
    expect(r.status).toBe(200);
    expect(r.body).toContain(expectedProxyOnly.titles[1]);
    expect(socks.log()).toContain(`connected to 127.0.0.1:${new URL(site.origin).port}`);
  });

  it('the next render without a proxy goes direct again', async () => {
    const r = await browser.fetch(`${site.origin}/proxy/item/3`);
    expect(r.status).toBe(expectedProxyOnly.refusedStatus);
  });

  it('refuses a tenant’s proxy the egress rules forbid before rendering', async () => {
    const forbidden = new ProxyPools().pick('j', { proxies: [{ url: 'http://10.1.2.3:3128', username: null, password: null }], proxy_rotation: 'round_robin' })!.proxy;
    await expect(browser.fetch(`${site.origin}/proxy/item/1`, { proxy: forbidden })).rejects.toBeInstanceOf(UnsafeAddressError);
  });

  it('checks what a proxied page asks for as without a proxy: an address the allow-list does not open is not reached through the upstream', async () => {
    // Listening on 127.0.0.2, which the allow-list (127.0.0.1/32) does not open but microsocks would reach.
    const hits: string[] = [];
    const secret = createServer((q, r) => (hits.push(q.url ?? ''), r.writeHead(200, { 'access-control-allow-origin': '*' }).end('stack data')));
    await new Promise<void>((resolve) => secret.listen(0, '127.0.0.2', resolve));
    const secretUrl = `http://127.0.0.2:${(secret.address() as AddressInfo).port}/secret`;
    const page = await startLocalServer({
      '/page': (_q, r) =>
        r.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><p id="out">waiting</p><script>
fetch('${secretUrl}').then((x) => x.text(), () => 'blocked').then((t) => { document.getElementById('out').textContent = t; });
</script>`),
    });
    try {
      const r = await browser.fetch(`${page.origin}/page`, { proxy: endpoint(socks) });
      expect(r.status).toBe(200);
      expect(r.body).toContain('blocked');
      expect(hits).toEqual([]);
      expect(socks.log()).toContain(`connected to 127.0.0.1:${page.port}`);
      expect(socks.log()).not.toContain('127.0.0.2');
      // The same server is reachable without the egress rules' say: the refusal above is the check, not the network.
      expect(await (await fetch(secretUrl)).text()).toBe('stack data');
    } finally {
      await new Promise((resolve) => secret.close(resolve));
      await page.close();
    }
  });
});
