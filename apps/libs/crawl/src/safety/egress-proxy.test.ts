import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { AddressPolicy } from './address-policy.ts';
import { parseAllowList } from './allow-list.ts';
import { startEgressProxy, type EgressProxy } from './egress-proxy.ts';
import { SafeResolver } from './safe-resolver.ts';

let server: LocalServer;
let proxy: EgressProxy;

beforeAll(async () => {
  server = await startLocalServer({ '/hello': (q, r) => r.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${q.headers.host}`) });
  const resolver = new SafeResolver(new AddressPolicy(parseAllowList(`127.0.0.1:${server.port}`)), {
    resolve: async (h) => (h === 'good.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.8', family: 4 }]),
  });
  proxy = await startEgressProxy(resolver);
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});

function viaProxy(target: string): Promise<{ status: number; body: string }> {
  const p = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: p.hostname, port: p.port, path: target, headers: { host: new URL(target).host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function tunnel(authority: string): Promise<string> {
  const p = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(p.port), p.hostname, () => s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    s.once('data', (d: Buffer) => {
      resolve(d.toString().split('\r\n')[0]!);
      s.destroy();
    });
    s.on('error', reject);
  });
}

describe('egress proxy', () => {
  it('forwards plain HTTP to the checked address of a name', async () => {
    expect(await viaProxy(`http://good.test:${server.port}/hello`)).toEqual({ status: 200, body: `hello good.test:${server.port}` });
  });

  it('refuses names resolving to forbidden addresses, and forbidden literals', async () => {
    expect((await viaProxy(`http://evil.test:${server.port}/hello`)).status).toBe(403);
    expect((await viaProxy('http://169.254.169.254/latest')).status).toBe(403);
    expect(proxy.refusals()).toBeGreaterThanOrEqual(2);
  });

  it('tunnels CONNECT only to allowed addresses', async () => {
    expect(await tunnel(`good.test:${server.port}`)).toBe('HTTP/1.1 200 Connection Established');
    expect(await tunnel('evil.test:443')).toMatch(/^HTTP\/1.1 403/);
    expect(await tunnel('[fd00:ec2::254]:80')).toMatch(/^HTTP\/1.1 403/);
    expect(await tunnel('good.test:99999')).toMatch(/^HTTP\/1.1 400/);
  });

  it('opens an allowed address on its listed port only, for plain HTTP and tunnels alike', async () => {
    const other = await startLocalServer({ '/hello': (_q, r) => r.writeHead(200).end('other') });
    try {
      expect((await viaProxy(`http://127.0.0.1:${other.port}/hello`)).status).toBe(403);
      expect((await viaProxy(`http://good.test:${other.port}/hello`)).status).toBe(403);
      expect(await tunnel(`127.0.0.1:${other.port}`)).toMatch(/^HTTP\/1.1 403/);
      expect(await tunnel(`good.test:${other.port}`)).toMatch(/^HTTP\/1.1 403/);
      expect(other.hits).toEqual([]);
      expect((await viaProxy(`http://127.0.0.1:${server.port}/hello`)).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});
