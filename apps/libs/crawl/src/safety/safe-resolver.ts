import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { DnsNotFoundError, InvalidUrlError, NetworkError, UnsafeAddressError } from '../errors.ts';
import { AddressPolicy } from './address-policy.ts';

/** How names become addresses; the system resolver by default, replaceable in tests. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export interface SafeResolverOptions {
  /** How long a resolution is reused. Short: it is a cache for bursts, not a DNS server. */
  readonly ttlMs?: number;
  readonly maxEntries?: number;
  readonly resolve?: Resolve;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The shape `net.connect({ lookup })` calls. */
export type LookupFunction = (hostname: string, options: { family?: number | string; all?: boolean } | number, callback: LookupCallback) => void;

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };

/** The port a connection for `u` goes to: the explicit one, else the scheme's default. */
export function urlPort(u: URL): number {
  if (u.port) return Number(u.port);
  const port = DEFAULT_PORTS[u.protocol];
  if (port === undefined) throw new InvalidUrlError(`no port for scheme ${u.protocol} in ${u.href}`);
  return port;
}

/**
 * The system resolver, except that a name under `.localhost` is the IPv4 loopback address without
 * asking it: RFC 6761 §6.3 reserves those names for loopback, Chromium resolves them so itself, and
 * the system resolver of most Linux machines does not (glibc without nss-myhostname finds only
 * `localhost` itself, in /etc/hosts). So an HTTP fetch and a browser fetch of `shop.localhost` reach
 * the same place, and local test sites can have names (and registrable domains) of their own. The
 * address policy applies to the answer as to any other: loopback is refused unless TRAWL_FETCH_ALLOW
 * opens it.
 */
export const lookupName: Resolve = async (hostname) => {
  if (hostname.endsWith('.localhost') || hostname.endsWith('.localhost.')) return [{ address: '127.0.0.1', family: 4 }];
  return dnsLookup(hostname, { all: true, verbatim: true });
};

/**
 * Resolves host names and refuses the resolution when ANY address is forbidden (a name that answers
 * with one public and one private address is a rebinding attempt, not a mixed blessing).
 *
 * Every check is for a host and a port: the allow-list may open an address on some ports only.
 *
 * Pinning: `lookupFor(port)` is handed to the socket layer (undici's connector, the egress proxy's
 * `net.connect`), so the address the socket connects to is the one that was just checked; there is
 * no second resolution a rebinding DNS server could answer differently. IP literals never reach a
 * lookup, so those callers check them with {@link checkLiteral} first.
 *
 * Resolutions are cached briefly and concurrent lookups of one name share one query: `dns.lookup`
 * runs on libuv's small thread pool, and a crawl asks for the same few hosts thousands of times.
 */
export class SafeResolver {
  private readonly cache = new Map<string, { at: number; result: Promise<LookupAddress[]> }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly resolveFn: Resolve;

  constructor(
    readonly policy: AddressPolicy = AddressPolicy.fromEnv(),
    options: SafeResolverOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.resolveFn = options.resolve ?? lookupName;
  }

  /** The addresses of `hostname` checked for a connection to `port`; throws UnsafeAddressError, DnsNotFoundError or NetworkError. */
  async resolve(hostname: string, port: number): Promise<LookupAddress[]> {
    const host = hostname.toLowerCase();
    if (isIP(host)) {
      this.checkLiteral(host, port);
      return [{ address: host, family: isIP(host) }];
    }
    const addresses = await this.cached(host);
    if (addresses.length === 0) throw new DnsNotFoundError(`${host} has no address`);
    if (!this.policy.isHostAllowed(host, port)) {
      for (const a of addresses) {
        const reason = this.policy.blockedReason(a.address, port);
        if (reason) throw new UnsafeAddressError(`refused ${host}:${port}: ${reason}`, host, a.address);
      }
    }
    return addresses;
  }

  /** Throws when a connection to an IP-literal host (as in a URL: `127.0.0.1`, `[::1]`) on `port` is forbidden. */
  checkLiteral(host: string, port: number): void {
    if (this.policy.isHostAllowed(host, port)) return;
    const reason = this.policy.blockedReason(host, port);
    if (reason) throw new UnsafeAddressError(`refused ${host}:${port}: ${reason}`, host, host);
  }

  /** Check a URL's host and port before a request (or a browser navigation). */
  async checkUrl(url: string | URL): Promise<void> {
    const u = typeof url === 'string' ? new URL(url) : url;
    const host = u.hostname;
    const port = urlPort(u);
    if (host.startsWith('[') || isIP(host)) this.checkLiteral(host, port);
    else await this.resolve(host, port);
  }

  /**
   * A `net.connect` lookup for connections to `port`: resolves through the checks above and hands
   * the socket the addresses that were checked. `net.connect` does not tell a lookup the port, so
   * each port gets its own function.
   */
  lookupFor(port: number): LookupFunction {
    return (hostname, options, callback) => {
      const opts = typeof options === 'number' ? { family: options } : (options ?? {});
      this.resolve(hostname, port).then(
        (addresses) => {
          const family = opts.family === 'IPv4' ? 4 : opts.family === 'IPv6' ? 6 : Number(opts.family ?? 0);
          const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
          if (usable.length === 0) {
            const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${family} address`);
            err.code = 'ENOTFOUND';
            callback(err, '');
            return;
          }
          if (opts.all) callback(null, usable);
          else callback(null, usable[0]!.address, usable[0]!.family);
        },
        (err: NodeJS.ErrnoException) => callback(err, ''),
      );
    };
  }

  private cached(host: string): Promise<LookupAddress[]> {
    const now = Date.now();
    const hit = this.cache.get(host);
    if (hit && now - hit.at < this.ttlMs) return hit.result;
    if (this.cache.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest tenth.
      let n = Math.ceil(this.maxEntries / 10);
      for (const key of this.cache.keys()) {
        this.cache.delete(key);
        if (--n <= 0) break;
      }
    }
    const result = this.resolveFn(host).catch((err: NodeJS.ErrnoException) => {
      this.cache.delete(host);
      if (err.code === 'ENOTFOUND' || err.code === 'ENODATA') throw new DnsNotFoundError(`${host} does not resolve`, { cause: err });
      throw new NetworkError(`DNS lookup of ${host} failed: ${err.code ?? err.message}`, { cause: err });
    });
    this.cache.set(host, { at: now, result });
    return result;
  }
}
