/**
 * HTTPS through a real HTTP proxy's CONNECT tunnel: Debian's tinyproxy (started by the harness)
 * in front of a local TLS server whose certificate is made for this run (Debian's openssl: a
 * throw-away self-signed certificate for 127.0.0.1). Proves the CONNECT path — tinyproxy logs the
 * tunnel and never sees the request inside it (no `Via`), the server answers over TLS — that the
 * target's certificate is still checked through the tunnel, and that the egress rules still apply
 * to the proxy's own address and to the target behind it.
 *
 * The fetcher has no option to trust another CA (certificates are checked against the system's
 * store, as for any site), so the test adds its certificate to this test process's default CAs
 * (Node's tls.setDefaultCACertificates) after showing that, without it, the fetch is refused.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { startHttpProxy, type RunningProxy } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TlsError, UnsafeAddressError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { ProxyPools, type ProxyEndpoint } from './proxy-pool.ts';

let dir: string;
let cert: string;
let server: Server;
let origin: string;
let tiny: RunningProxy;
const defaultCAs = getCACertificates('default');
/** What the TLS server saw of each request: whether it came over TLS, and the proxy's Via if any. */
const seen: { path: string; tls: boolean; via: string | null }[] = [];

/** A tenant's proxy (not the operator's): held to the egress rules. */
const tenantProxy = (proxy: RunningProxy): ProxyEndpoint => new ProxyPools().pick('job', { proxies: [{ url: proxy.url, username: null, password: null }], proxy_rotation: 'round_robin' })!.proxy;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trawl-connect-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=trawl-test', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    seen.push({ path: req.url ?? '/', tls: 'encrypted' in req.socket && req.socket.encrypted === true, via: req.headers.via ?? null });
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>over TLS</title><p class="secret">through the tunnel</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tiny = await startHttpProxy();
});

afterAll(async () => {
  setDefaultCACertificates(defaultCAs);
  await tiny?.close();
  await new Promise((resolve) => server?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('HTTPS through tinyproxy (CONNECT)', () => {
  it("checks the target's certificate through the tunnel, then fetches over TLS inside it: the proxy sees only the CONNECT", async () => {
    const fetcher = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1')), totalTimeoutMs: 10_000, connectTimeoutMs: 3_000 });
    try {
      // Not trusted yet: refused as a TLS failure of the site (not counted against the proxy).
      const untrusted = await fetcher.fetch(`${origin}/page`, { proxy: tenantProxy(tiny) }).catch((e: unknown) => e);
      expect(untrusted).toBeInstanceOf(TlsError);
      expect(tiny.log()).toContain(`CONNECT 127.0.0.1:${new URL(origin).port}`);
      setDefaultCACertificates([...defaultCAs, cert]);
      const before = seen.length;
      const r = await fetcher.fetch(`${origin}/page`, { proxy: tenantProxy(tiny) });
      expect(r.status).toBe(200);
      expect(r.body).toContain('through the tunnel');
      expect(seen.slice(before)).toEqual([{ path: '/page', tls: true, via: null }]);
      // The request line stays inside the tunnel: the proxy never logs the path.
      expect(tiny.log()).not.toContain('/page');
    } finally {
      await fetcher.close();
    }
  });

  it("refuses a tenant's proxy whose address the egress rules forbid, and a target behind it they forbid, before any CONNECT", async () => {
    setDefaultCACertificates([...defaultCAs, cert]);
    const targetPort = new URL(origin).port;
    const onlyTarget = new HttpFetcher({ policy: new AddressPolicy(parseAllowList(`127.0.0.1:${targetPort}`)), totalTimeoutMs: 5_000 });
    const onlyProxy = new HttpFetcher({ policy: new AddressPolicy(parseAllowList(`127.0.0.1:${tiny.port}`)), totalTimeoutMs: 5_000 });
    try {
      const connects = () => tiny.log().split(`CONNECT 127.0.0.1:${targetPort}`).length;
      const before = connects();
      const proxyRefused = await onlyTarget.fetch(`${origin}/page`, { proxy: tenantProxy(tiny) }).catch((e: unknown) => e);
      expect(proxyRefused).toBeInstanceOf(UnsafeAddressError);
      expect((proxyRefused as UnsafeAddressError).detail).toContain(`proxy 127.0.0.1:${tiny.port}`);
      const targetRefused = await onlyProxy.fetch(`${origin}/page`, { proxy: tenantProxy(tiny) }).catch((e: unknown) => e);
      expect(targetRefused).toBeInstanceOf(UnsafeAddressError);
      expect(connects()).toBe(before);
    } finally {
      await Promise.all([onlyTarget.close(), onlyProxy.close()]);
    }
  });
});
