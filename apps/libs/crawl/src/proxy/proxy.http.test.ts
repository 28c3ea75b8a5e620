/**
 * The HTTP fetcher through real proxies — Debian's tinyproxy (HTTP) and microsocks (SOCKS5),
 * started by the harness on free ports — against the hard site's pages that answer only through a
 * proxy. Each proxied fetch is proven proxied by what the proxy leaves behind (tinyproxy's Via header
 * and its request log; microsocks' source address 127.0.0.2 and its tunnel log), so a fetch that
 * went direct fails the test (the page answers it 403 anyway).
 */
import { createHardSite, expectedProxyOnly, startHttpProxy, startSocksProxy, type HardSite, type RunningProxy } from '@trawl/demo-site';
import type { ProxySpec } from '@trawl/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsafeAddressError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { samples } from '@trawl/schemas';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { PageProcessor } from '../worker/page-processor.ts';
import { SitemapReader } from '../sitemap/sitemap-reader.ts';
import { ProxyConnectError, ProxyPools, type ProxyEndpoint, type ProxyOutcome } from './proxy-pool.ts';

const CREDS = { username: 'crawler', password: 'pr0xy-pass' };
let site: HardSite;
let tiny: RunningProxy;
let tinyAuth: RunningProxy;
let socks: RunningProxy;
let socksAuth: RunningProxy;
let fetcher: HttpFetcher;

/** A pool's endpoint for one proxy, credentials "sealed" as the API would (here: a reversible stand-in for SecretBox). */
function endpoint(proxy: RunningProxy, creds: { username: string; password: string } | null = proxy.credentials): ProxyEndpoint {
  const spec: ProxySpec = { url: proxy.url, username: creds ? `tsec1.${creds.username}` : null, password: creds ? `tsec1.${creds.password}` : null };
  return new ProxyPools({ open: (s) => s.slice('tsec1.'.length) }).pick('job', { proxies: [spec], proxy_rotation: 'round_robin' })!.proxy;
}

beforeAll(async () => {
  [site, tiny, tinyAuth, socks, socksAuth] = await Promise.all([
    createHardSite(),
    startHttpProxy(),
    startHttpProxy({ credentials: CREDS }),
    startSocksProxy(),
    startSocksProxy({ credentials: CREDS }),
  ]);
  fetcher = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1')), totalTimeoutMs: 10_000, connectTimeoutMs: 3_000 });
});

afterAll(async () => {
  await fetcher?.close();
  await Promise.all([site, tiny, tinyAuth, socks, socksAuth].map((s) => s?.close()));
});

const entry = () => `${site.origin}${expectedProxyOnly.entry}`;

describe('HttpFetcher through real proxies', () => {
  it('is refused by the proxy-only page when it goes direct', async () => {
    const r = await fetcher.fetch(entry());
    expect(r.status).toBe(expectedProxyOnly.refusedStatus);
  });

  it('fetches through tinyproxy (HTTP): the page sees the proxy’s Via, the proxy logs the request', async () => {
    const r = await fetcher.fetch(`${site.origin}/proxy/item/1`, { proxy: endpoint(tiny) });
    expect(r.status).toBe(200);
    expect(r.body).toContain(expectedProxyOnly.titles[0]);
    expect(tiny.log()).toContain(`GET ${site.origin}/proxy/item/1`);
  });

  it('sends Basic credentials to tinyproxy, and a 407 without them is a proxy failure', async () => {
    const r = await fetcher.fetch(`${site.origin}/proxy/item/2`, { proxy: endpoint(tinyAuth) });
    expect(r.status).toBe(200);
    expect(tinyAuth.log()).toContain(`GET ${site.origin}/proxy/item/2`);
    const err = await fetcher.fetch(`${site.origin}/proxy/item/2`, { proxy: endpoint(tinyAuth, null) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProxyConnectError);
    expect((err as Error).message).toContain(`proxy 127.0.0.1:${tinyAuth.port}`);
  });

  it('fetches through microsocks (SOCKS5): the page sees the request come from the proxy’s address', async () => {
    const r = await fetcher.fetch(`${site.origin}/proxy/item/3`, { proxy: endpoint(socks) });
    expect(r.status).toBe(200);
    expect(r.body).toContain(expectedProxyOnly.titles[2]);
    expect(socks.log()).toContain(`connected to 127.0.0.1:${new URL(site.origin).port}`);
  });

  it('authenticates to microsocks with user and password; wrong ones are a proxy failure that names no secret', async () => {
    const r = await fetcher.fetch(entry(), { proxy: endpoint(socksAuth) });
    expect(r.status).toBe(200);
    const err = await fetcher.fetch(entry(), { proxy: endpoint(socksAuth, { username: 'crawler', password: 'wrong-secret' }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProxyConnectError);
    expect((err as Error).message).not.toContain('wrong-secret');
  });

  it('refuses a tenant’s proxy on an address the egress rules forbid, but not the operator’s', async () => {
    const strict = new HttpFetcher({ policy: new AddressPolicy(parseAllowList(`127.0.0.1:${new URL(site.origin).port}`)), totalTimeoutMs: 5_000 });
    try {
      const err = await strict.fetch(entry(), { proxy: endpoint(tiny) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsafeAddressError);
      expect((err as UnsafeAddressError).detail).toContain(`proxy 127.0.0.1:${tiny.port}`);
      const operator = new ProxyPools({ defaultProxy: tiny.url }).pick('j', { proxies: [], proxy_rotation: 'round_robin' })!.proxy;
      expect((await strict.fetch(entry(), { proxy: operator })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('checks the target through a proxy too: a forbidden target is refused before anything is sent', async () => {
    const proxyOnly = new HttpFetcher({ policy: new AddressPolicy(parseAllowList(`127.0.0.1:${tiny.port}`)), totalTimeoutMs: 5_000 });
    try {
      const before = tiny.log().length;
      const err = await proxyOnly.fetch(entry(), { proxy: endpoint(tiny) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsafeAddressError);
      expect(tiny.log().slice(before)).not.toContain('/proxy/');
    } finally {
      await proxyOnly.close();
    }
  });

  it('a proxy that does not answer fails as a proxy error, benches after N in a row, and the pool moves on', async () => {
    const dead = await startHttpProxy();
    const deadUrl = dead.url;
    await dead.close();
    const benched: string[] = [];
    const pools = new ProxyPools({ benchAfter: 2, benchMs: 60_000, observer: { benched: (_job, p) => benched.push(p.label) } });
    const spec = { proxies: [{ url: deadUrl, username: null, password: null }, { url: tiny.url, username: null, password: null }], proxy_rotation: 'round_robin' as const };
    const got: number[] = [];
    for (let i = 0; i < 6; i++) {
      const choice = pools.pick('job', spec)!;
      const started = performance.now();
      try {
        got.push((await fetcher.fetch(entry(), { proxy: choice.proxy })).status);
        pools.report(choice, 'ok', performance.now() - started);
      } catch (err) {
        expect(err).toBeInstanceOf(ProxyConnectError);
        pools.report(choice, 'error', performance.now() - started);
      }
    }
    expect(benched).toEqual([new URL(deadUrl).host]);
    expect(got.length).toBeGreaterThanOrEqual(4);
    expect(got.every((s) => s === 200)).toBe(true);
  });

  it('PageProcessor sends a job with proxies through its pool (robots.txt too), rotating, and extracts the proxied items', async () => {
    const outcomes: string[] = [];
    const pools = new ProxyPools({ open: (v) => v.slice('tsec1.'.length), observer: { outcome: (p, o: ProxyOutcome) => outcomes.push(`${p.label} ${o}`) } });
    const robots = new RobotsCache(fetcher);
    const processor = new PageProcessor({ http: fetcher, robots, limiter: new HostLimiter(), proxies: pools });
    const spec = testSpec({
      proxies: [
        { url: tinyAuth.url, username: `tsec1.${CREDS.username}`, password: `tsec1.${CREDS.password}` },
        { url: socks.url, username: null, password: null },
      ],
      proxy_rotation: 'round_robin',
      item_root: expectedProxyOnly.itemSelector,
      item_fields: [{ name: 'title', selector: expectedProxyOnly.titleSelector, attribute: null, xpath: null, transforms: [] }],
    });
    const tinyBefore = tinyAuth.log().length;
    const titles: unknown[] = [];
    for (const n of [1, 2, 3]) {
      const page = await processor.process({ ...samples.FetchRequested, job_id: 'job-proxied', url: `${site.origin}/proxy/item/${n}`, depth: 0, referrer: null, spec, params: {}, cached: null });
      expect(page.result.status).toBe(200);
      titles.push(...page.items.map((i) => i.fields.title));
    }
    expect(titles).toEqual(expectedProxyOnly.titles);
    // robots.txt was read through a proxy as well (the site answers nothing direct).
    expect(tinyAuth.log().slice(tinyBefore) + socks.log()).toContain('robots.txt');
    expect(new Set(outcomes)).toEqual(new Set([`127.0.0.1:${tinyAuth.port} ok`, `127.0.0.1:${socks.port} ok`]));
  });

  it('reads a root’s robots.txt and sitemaps through the job’s proxy too', async () => {
    const robots = new RobotsCache(fetcher);
    const limiter = new HostLimiter();
    const processor = new PageProcessor({ http: fetcher, robots, limiter, sitemaps: new SitemapReader({ http: fetcher, robots, limiter }), proxies: new ProxyPools() });
    const spec = testSpec({ proxies: [{ url: tiny.url, username: null, password: null }], sitemap: 'include' });
    const from = tiny.log().length;
    const page = await processor.process({ ...samples.FetchRequested, job_id: 'job-sitemaps', url: `${site.origin}/`, depth: 0, referrer: null, spec, params: {}, cached: null });
    expect(page.result.status).toBe(200);
    const said = tiny.log().slice(from);
    for (const path of ['/robots.txt', '/', '/sitemap.xml']) expect(said).toContain(`GET ${site.origin}${path} `);
  });
});
