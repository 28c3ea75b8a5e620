import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { DnsNotFoundError, NetworkError, UnsafeAddressError } from '../errors.ts';
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

/**
 * Resolves host names and refuses the resolution when ANY address is forbidden (a name that answers
 * with one public and one private address is a rebinding attempt, not a mixed blessing).
 *
 * Pinning: `lookup` is handed to the socket layer (undici `connect.lookup`), so the address the
 * socket connects to is the one that was just checked; there is no second resolution a rebinding
 * DNS server could answer differently. IP literals never reach a lookup, so the fetcher checks them
 * with {@link checkLiteral} first.
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
    this.resolveFn = options.resolve ?? ((h) => dnsLookup(h, { all: true, verbatim: true }));
  }

  /** The checked addresses of `hostname`; throws UnsafeAddressError, DnsNotFoundError or NetworkError. */
  async resolve(hostname: string): Promise<LookupAddress[]> {
    const host = hostname.toLowerCase();
    if (isIP(host)) {
      this.checkLiteral(host);
      return [{ address: host, family: isIP(host) }];
    }
    const addresses = await this.cached(host);
    if (addresses.length === 0) throw new DnsNotFoundError(`${host} has no address`);
    if (!this.policy.isHostAllowed(host)) {
      for (const a of addresses) {
        const reason = this.policy.blockedReason(a.address);
        if (reason) throw new UnsafeAddressError(`refused ${host}: ${reason}`, host, a.address);
      }
    }
    return addresses;
  }

  /** Throws when an IP-literal host (as in a URL: `127.0.0.1`, `[::1]`) is forbidden. */
  checkLiteral(host: string): void {
    if (this.policy.isHostAllowed(host)) return;
    const reason = this.policy.blockedReason(host);
    if (reason) throw new UnsafeAddressError(`refused ${host}: ${reason}`, host, host);
  }

  /** Check a URL's host before a request (or a browser navigation). */
  async checkUrl(url: string | URL): Promise<void> {
    const u = typeof url === 'string' ? new URL(url) : url;
    const host = u.hostname;
    if (host.startsWith('[') || isIP(host)) this.checkLiteral(host);
    else await this.resolve(host);
  }

  /** A `net.connect` lookup: resolves through the checks above and connects to what was checked. */
  readonly lookup = (hostname: string, options: { family?: number | string; all?: boolean } | number, callback: LookupCallback): void => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {});
    this.resolve(hostname).then(
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
