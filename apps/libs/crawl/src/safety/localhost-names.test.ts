import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsafeAddressError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { AddressPolicy } from './address-policy.ts';
import { parseAllowList } from './allow-list.ts';
import { lookupName, SafeResolver } from './safe-resolver.ts';

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`host ${req.headers.host}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('names under .localhost (RFC 6761)', () => {
  it('resolve to the IPv4 loopback address without the system resolver', async () => {
    expect(await lookupName('shop.localhost')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await lookupName('a.b.localhost.')).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('are refused like loopback unless the allow-list opens it, and fetched when it does', async () => {
    await expect(new SafeResolver(new AddressPolicy()).resolve('shop.localhost', port)).rejects.toBeInstanceOf(UnsafeAddressError);
    const fetcher = new HttpFetcher({ resolver: new SafeResolver(new AddressPolicy(parseAllowList(`127.0.0.1:${port}`))) });
    try {
      const page = await fetcher.fetch(`http://blog.shop.localhost:${port}/`);
      expect(page.status).toBe(200);
      expect(page.body).toBe(`host blog.shop.localhost:${port}`);
    } finally {
      await fetcher.close();
    }
  });
});
