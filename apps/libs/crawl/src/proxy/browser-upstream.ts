import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { RequestError, Server } from 'proxy-chain';
import { DnsNotFoundError, UnsafeAddressError } from '../errors.ts';
import type { SafeResolver } from '../safety/safe-resolver.ts';
import type { ProxyEndpoint } from './proxy-pool.ts';

/** What a browser context is pointed at to reach the web through one upstream proxy. */
export interface UpstreamRoute {
  /** `http://127.0.0.1:<port>`: the context's `proxyServer`. */
  readonly proxyServer: string;
  /** The context's `page.authenticate` answer: a token for this upstream, never the upstream's own credentials. */
  readonly username: string;
  readonly password: string;
}

export interface BrowserUpstreams {
  /** The route for one upstream proxy (made on first use, kept for its next renders). */
  routeFor(proxy: ProxyEndpoint): UpstreamRoute;
  /** Connections refused by the egress rules so far. */
  refusals(): number;
  close(): Promise<void>;
}

interface Route {
  readonly proxy: ProxyEndpoint;
  readonly route: UpstreamRoute;
}

const MAX_ROUTES = 256;

/**
 * Chromium's way to an upstream proxy (a job's `proxies`, TRAWL_PROXY_URL): a local chaining proxy
 * (proxy-chain) that a render's browser context uses as its `proxyServer`, and that forwards to the
 * upstream — HTTP CONNECT or SOCKS5, with the upstream's credentials, which thus never reach Chromium.
 *
 * The browser's egress stays checked as without a proxy (egress-proxy.ts is its route then): each
 * request's target is checked here by host and port — an IP literal as such, a name by what it
 * resolves to on this machine (a name this machine cannot resolve goes on: the upstream resolves
 * it) — and the request interceptor checks every URL too. The upstream itself is a tenant's
 * address like any other: resolved and checked by the egress rules, and connected to at the address
 * that was checked (the chain is given the IP, not the name). The operator's proxy is taken as given.
 *
 * One listener serves every upstream: a context authenticates to it (`page.authenticate`) with a
 * random token that names its upstream, so a page of one job cannot ride another job's proxy by
 * guessing a port, and a connection without a known token is answered 407.
 */
export async function startBrowserUpstreams(resolver: SafeResolver): Promise<BrowserUpstreams> {
  const byToken = new Map<string, Route>();
  const byKey = new Map<string, Route>();
  let refused = 0;

  const server = new Server({
    port: 0,
    host: '127.0.0.1',
    verbose: false,
    prepareRequestFunction: async ({ username, password, hostname, port }) => {
      const route = byToken.get(username);
      if (!route || route.route.password !== password) return { requestAuthentication: true };
      const host = hostname.replace(/^\[|\]$/g, '');
      try {
        if (isIP(host)) resolver.checkLiteral(host, port);
        else await resolver.resolve(host, port).catch((err: unknown) => {
          if (!(err instanceof DnsNotFoundError)) throw err;
          return [];
        });
      } catch (err) {
        if (err instanceof UnsafeAddressError) refused++;
        throw new RequestError(UnsafeAddressError.MESSAGE, 403);
      }
      return { upstreamProxyUrl: await upstreamUrl(route.proxy, resolver) };
    },
  });
  // proxy-chain reports each failed connection as an event; a page's failures are the page's, seen in its render.
  server.on('requestFailed', () => undefined);
  server.on('connectionClosed', () => undefined);
  await server.listen();
  const proxyServer = `http://127.0.0.1:${server.port}`;

  return {
    routeFor(proxy) {
      const key = `${proxy.scheme}//${proxy.label}\0${proxy.username ?? ''}\0${proxy.password ?? ''}\0${proxy.operator}`;
      const known = byKey.get(key);
      if (known) return known.route;
      if (byKey.size >= MAX_ROUTES) {
        const [oldKey, old] = byKey.entries().next().value!;
        byKey.delete(oldKey);
        byToken.delete(old.route.username);
      }
      const route: Route = { proxy, route: { proxyServer, username: randomBytes(12).toString('hex'), password: randomBytes(18).toString('hex') } };
      byKey.set(key, route);
      byToken.set(route.route.username, route);
      return route.route;
    },
    refusals: () => refused,
    close: () => server.close(true),
  };
}

/** The upstream as proxy-chain takes it: a tenant's at the address the egress rules just checked, with its credentials. */
async function upstreamUrl(proxy: ProxyEndpoint, resolver: SafeResolver): Promise<string> {
  let host = proxy.host;
  if (!proxy.operator) {
    const [first] = await resolver.resolve(proxy.host, proxy.port).catch(() => {
      throw new RequestError('the proxy is not reachable', 502);
    });
    host = first!.address;
  }
  const auth = proxy.username !== null ? `${encodeURIComponent(proxy.username)}:${encodeURIComponent(proxy.password ?? '')}@` : '';
  return `${proxy.scheme}//${auth}${host.includes(':') ? `[${host}]` : host}:${proxy.port}`;
}
