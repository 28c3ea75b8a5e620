import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkError, RobotsDisallowedError, RobotsUnavailableError, UnsafeAddressError } from '../errors.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { RobotsCache, type RobotsFetcher } from './robots.ts';

const result = (status: number, body: string | null = null): FetchResult => ({
  url: 'x',
  finalUrl: 'x',
  status,
  contentType: 'text/plain',
  bytes: 0,
  wireBytes: 0,
  fetchMs: 1,
  body,
  isHtml: false,
  truncated: false,
  redirects: [],
  retryAfterMs: null,
  charset: null,
  renderMode: 'http',
});

/** A scripted fetcher: the cache logic (status handling, TTLs) without sockets. */
function scripted(answers: (() => FetchResult)[]): RobotsFetcher & { calls: number } {
  const f = {
    calls: 0,
    async fetch() {
      const next = answers[Math.min(f.calls, answers.length - 1)]!;
      f.calls++;
      return next();
    },
  };
  return f;
}

describe('RobotsCache', () => {
  it('allows everything when robots.txt is a 4xx', async () => {
    const cache = new RobotsCache(scripted([() => result(404)]));
    await expect(cache.check('http://e.com/anything')).resolves.toEqual({ allowed: true, crawlDelayMs: null });
  });

  it('makes the origin wait on 5xx, caches that briefly, then asks again', async () => {
    let now = 0;
    const f = scripted([() => result(503), () => result(200, 'User-agent: *\nDisallow: /x\n')]);
    const cache = new RobotsCache(f, { errorTtlMs: 1000, now: () => now });
    await expect(cache.check('http://e.com/a')).rejects.toMatchObject({ code: 'TRAWL_ROBOTS_UNAVAILABLE', retriable: true });
    await expect(cache.check('http://e.com/b')).rejects.toBeInstanceOf(RobotsUnavailableError);
    expect(f.calls).toBe(1);
    now = 1001;
    await expect(cache.check('http://e.com/x/1')).resolves.toMatchObject({ allowed: false });
    expect(f.calls).toBe(2);
  });

  it('maps network errors to retriable unavailability but keeps safety refusals as they are', async () => {
    const net = new RobotsCache(scripted([() => { throw new NetworkError('reset'); }]));
    await expect(net.check('http://e.com/')).rejects.toBeInstanceOf(RobotsUnavailableError);
    const unsafe = new RobotsCache(scripted([() => { throw new UnsafeAddressError('no', 'e.com', '10.0.0.1'); }]));
    await expect(unsafe.check('http://e.com/')).rejects.toBeInstanceOf(UnsafeAddressError);
  });

  it('fetches once per origin, also under concurrency, until the TTL passes', async () => {
    let now = 0;
    const f = scripted([() => result(200, 'User-agent: *\nCrawl-delay: 3\n')]);
    const cache = new RobotsCache(f, { ttlMs: 10_000, now: () => now });
    await Promise.all(Array.from({ length: 20 }, (_, i) => cache.check(`http://e.com/p${i}`)));
    await cache.check('http://e.com/q');
    expect(f.calls).toBe(1);
    expect((await cache.check('http://e.com/')).crawlDelayMs).toBe(3000);
    await cache.check('http://other.com/');
    expect(f.calls).toBe(2);
    now = 10_001;
    await cache.check('http://e.com/');
    expect(f.calls).toBe(3);
  });

  it('evicts the least recently used origins', async () => {
    const f = scripted([() => result(404)]);
    const cache = new RobotsCache(f, { maxOrigins: 2 });
    await cache.check('http://a.com/');
    await cache.check('http://b.com/');
    await cache.check('http://a.com/');
    await cache.check('http://c.com/'); // evicts b
    await cache.check('http://a.com/');
    expect(f.calls).toBe(3);
    await cache.check('http://b.com/');
    expect(f.calls).toBe(4);
  });
});

describe('RobotsCache: bounded by what it keeps, not only by origins', () => {
  it('keeps at most maxChars of robots.txt, however many origins serve the largest file', async () => {
    const big = `User-agent: *\n${Array.from({ length: 20_000 }, (_, i) => `Disallow: /p${i}/*x$`).join('\n')}\n`;
    const f = scripted([() => result(200, big)]);
    const cache = new RobotsCache(f, { maxChars: 2 * 1024 * 1024 });
    for (let i = 0; i < 40; i++) await cache.check(`http://s${i}.evil.example/x`);
    expect(cache.keptChars).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(cache.keptChars).toBeGreaterThan(0);
    // The most recent origin is still kept: no second fetch.
    await cache.check('http://s39.evil.example/y');
    expect(f.calls).toBe(40);
  });
});

describe('RobotsCache over HTTP', () => {
  let server: LocalServer;
  let fetcher: HttpFetcher;
  beforeAll(async () => {
    server = await startLocalServer({
      '/robots.txt': (_q, r) => r.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n'),
    });
    fetcher = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')) });
  });
  afterAll(async () => {
    await fetcher.close();
    await server.close();
  });

  it('reads a real robots.txt through the safe fetcher', async () => {
    const cache = new RobotsCache(fetcher);
    await expect(cache.assertAllowed(`${server.origin}/jobs`)).resolves.toMatchObject({ allowed: true });
    await expect(cache.assertAllowed(`${server.origin}/private/x`)).rejects.toBeInstanceOf(RobotsDisallowedError);
    expect(server.hits.filter((h) => h === '/robots.txt')).toHaveLength(1);
  });
});
