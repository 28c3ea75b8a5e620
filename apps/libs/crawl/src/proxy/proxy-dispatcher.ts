import { SocksClient } from 'socks';
import { Agent, ProxyAgent, buildConnector, type Dispatcher } from 'undici';
import { CrawlError, FetchAbortedError, FetchTimeoutError, UnsafeAddressError } from '../errors.ts';
import type { SafeResolver } from '../safety/safe-resolver.ts';
import { ProxyConnectError, type ProxyEndpoint } from './proxy-pool.ts';

export interface ProxyDispatcherOptions {
  readonly resolver: SafeResolver;
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly connections: number;
  readonly keepAliveTimeoutMs: number;
}

/**
 * An undici dispatcher that sends every request through one upstream proxy:
 *
 * - `http://` / `https://` proxies with undici's ProxyAgent: a plain-HTTP target is sent to the
 *   proxy as an absolute-URI request (as curl does, so the proxy may add its `Via`), an HTTPS one
 *   through a CONNECT tunnel; credentials as `Proxy-Authorization: Basic`.
 * - `socks5://` proxies with the `socks` library (RFC 1928/1929): the target's host name goes to
 *   the proxy, which resolves it; TLS to the target is negotiated over the tunnel.
 *
 * The connection to a tenant's proxy is pinned like any fetch: the safe resolver resolves and checks
 * the proxy's own host and port, and the socket connects to the address it checked (an IP literal is
 * checked by the caller, checkProxyAddress). The operator's proxy (TRAWL_PROXY_URL) is trusted
 * configuration and connects as given.
 */
export function proxyDispatcher(proxy: ProxyEndpoint, options: ProxyDispatcherOptions): Dispatcher {
  const lookup = proxy.operator ? undefined : options.resolver.lookupFor(proxy.port);
  const common = {
    connections: options.connections,
    pipelining: 1,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    keepAliveMaxTimeout: 120_000,
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
  };
  if (proxy.scheme === 'socks5:') {
    const tls = buildConnector({ timeout: options.connectTimeoutMs });
    return new Agent({
      ...common,
      connect: (opts, callback) => {
        const host = opts.hostname.replace(/^\[|\]$/g, '');
        const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
        SocksClient.createConnection({
          proxy: { host: proxy.host, port: proxy.port, type: 5, ...(proxy.username !== null ? { userId: proxy.username, password: proxy.password ?? '' } : {}) },
          command: 'connect',
          destination: { host, port },
          timeout: options.connectTimeoutMs,
          ...(lookup ? { socket_options: { lookup } as never } : {}),
        }).then(
          ({ socket }) => {
            if (opts.protocol !== 'https:') {
              callback(null, socket);
              return;
            }
            // The tunnel is a plain TCP stream to the target: TLS (and its certificate check) as for a direct connection.
            tls({ ...opts, httpSocket: socket } as never, callback);
          },
          (err: Error) => callback(err, null),
        );
      },
    });
  }
  const host = proxy.host.includes(':') ? `[${proxy.host}]` : proxy.host;
  return new ProxyAgent({
    ...common,
    uri: `${proxy.scheme}//${host}:${proxy.port}`,
    proxyTunnel: false,
    ...(proxy.username !== null ? { token: `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}` } : {}),
    proxyTls: { timeout: options.connectTimeoutMs, ...(lookup ? { lookup } : {}) } as never,
  });
}

/** A tenant's proxy address, checked by the egress rules before a request goes to it (names are also pinned at connect). */
export async function checkProxyAddress(proxy: ProxyEndpoint, resolver: SafeResolver): Promise<void> {
  if (proxy.operator) return;
  try {
    await resolver.resolve(proxy.host, proxy.port);
  } catch (err) {
    if (err instanceof UnsafeAddressError) throw new UnsafeAddressError(`proxy ${proxy.label} refused by the egress rules: ${err.detail}`, err.host, err.address, { cause: err });
    throw err;
  }
}

/**
 * What went wrong through a proxy, as the crawl's errors: the proxy's own failures (no connection,
 * a 407, a SOCKS refusal, a timeout before any answer) become ProxyConnectError, which the pool
 * counts towards benching; the egress rules, a cancel or the whole fetch's deadline stay what they are.
 */
export function proxyFailure(err: CrawlError, proxy: ProxyEndpoint, url: string): CrawlError {
  if (err instanceof UnsafeAddressError || err instanceof FetchAbortedError) return err;
  if (err instanceof FetchTimeoutError && err.phase !== 'connect') return err;
  if (err.code !== 'TRAWL_NETWORK' && err.code !== 'TRAWL_TIMEOUT' && err.code !== 'TRAWL_DNS_NOT_FOUND') return err;
  const reason = (err.cause instanceof Error ? err.cause.message : err.message).replace(/\/\/[^/@\s]*@/g, '//');
  return new ProxyConnectError(`through proxy ${proxy.label}: ${reason} (fetching ${url})`, { cause: err });
}
