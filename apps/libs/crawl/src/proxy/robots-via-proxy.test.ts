import { describe, expect, it } from 'vitest';
import type { FetchOptions } from '../fetch/http-fetcher.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { ProxyConnectError, ProxyPools } from './proxy-pool.ts';

const answer = (text: string) => ({ url: 'x', finalUrl: 'x', status: 200, contentType: 'text/plain', bytes: text.length, wireBytes: text.length, fetchMs: 1, body: text, isHtml: false, truncated: false, redirects: [], retryAfterMs: null, charset: null, renderMode: 'http' as const });
const proxyOf = (url: string) => new ProxyPools().pick('j', { proxies: [{ url, username: null, password: null }], proxy_rotation: 'round_robin' })!.proxy;

describe('robots.txt read through a proxy', () => {
  it('is kept apart from the direct one: a tenant’s proxy never decides robots.txt for others', async () => {
    const hostile = proxyOf('http://203.0.114.9:3128');
    const robots = new RobotsCache({
      async fetch(_url: string, options?: FetchOptions) {
        return answer(options?.proxy ? 'User-agent: *\nDisallow: /\n' : 'User-agent: *\nAllow: /\n');
      },
    });
    expect((await robots.check('https://shop.test/p/1', { proxy: hostile })).allowed).toBe(false);
    expect((await robots.check('https://shop.test/p/1')).allowed).toBe(true);
    expect((await robots.check('https://shop.test/p/1', { proxy: hostile })).allowed).toBe(false);
  });

  it('does not remember a proxy’s failure: the next read tries again', async () => {
    const proxy = proxyOf('http://203.0.114.9:3128');
    let calls = 0;
    const robots = new RobotsCache({
      async fetch() {
        calls++;
        if (calls === 1) throw new ProxyConnectError('through proxy 203.0.114.9:3128: ECONNREFUSED');
        return answer('User-agent: *\nAllow: /\n');
      },
    });
    await expect(robots.check('https://shop.test/', { proxy })).rejects.toBeInstanceOf(ProxyConnectError);
    expect((await robots.check('https://shop.test/', { proxy })).allowed).toBe(true);
    expect(calls).toBe(2);
  });
});
