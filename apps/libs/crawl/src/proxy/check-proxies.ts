import { isIP } from 'node:net';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseProxyUrl } from './proxy-pool.ts';

/** At most this many proxies in a pool: each is a metric series (by host:port) and a dispatcher of its own in every worker. */
export const MAX_PROXIES = 50;

export type ProxyProblemCode = 'INVALID_PROXY' | 'PROXY_NOT_ALLOWED';

export interface ProxyProblem {
  readonly code: ProxyProblemCode;
  readonly field: string;
  readonly message: string;
}

/** A proxy as configured (the API's normalised input): credentials literal or by secret name, opaque here. */
export interface ProxyInput {
  readonly url: string;
  readonly username: unknown;
  readonly password: unknown;
}

/**
 * A tenant's proxies, checked where they are configured (a website, a schedule's request, a crawl):
 * `http`, `https` or `socks5`, a host and a port, no path, no credentials in the URL (they come as
 * `username` / `password`, a literal or `{secret}`, and are sealed), a password only with a user,
 * and an address the egress rules let crawls reach — a proxy is an address Trawl connects to like
 * any page, so loopback, private, link-local and metadata addresses are refused unless the
 * operator's TRAWL_FETCH_ALLOW opens them, which never opens the stack's own ports
 * (egress-guard.ts). Host names are judged by name here (`localhost`); what a name resolves to is
 * checked by the worker at every connection, where it counts.
 *
 * `policy`: the API's egress policy (AddressPolicy.fromEnv() by default).
 */
export function checkProxies(proxies: readonly ProxyInput[] | undefined, prefix: string, policy: AddressPolicy = defaultPolicy()): ProxyProblem | null {
  if (!proxies || proxies.length === 0) return null;
  if (proxies.length > MAX_PROXIES) return { code: 'INVALID_PROXY', field: `${prefix}proxies`, message: `${prefix}proxies has ${proxies.length} proxies; at most ${MAX_PROXIES}` };
  const seen = new Set<string>();
  for (const [i, p] of proxies.entries()) {
    const field = `${prefix}proxies[${i}]`;
    const bad = (message: string): ProxyProblem => ({ code: 'INVALID_PROXY', field, message: `${field} ${message}` });
    let parsed;
    try {
      parsed = parseProxyUrl(p.url);
    } catch (err) {
      return bad(`is not a proxy URL: ${(err as Error).message}`);
    }
    if (parsed.username || parsed.password) return bad('carries credentials in its URL; give them as `username` and `password` (a literal or {"secret": "<name>"}), which are sealed');
    if (p.password != null && p.username == null) return bad('has a password without a username');
    const key = `${parsed.scheme}//${parsed.host}:${parsed.port}`;
    if (seen.has(key)) return bad(`repeats ${key}`);
    seen.add(key);
    const refusal = refusedAddress(parsed.host, parsed.port, policy);
    if (refusal) return { code: 'PROXY_NOT_ALLOWED', field, message: `${field} is not allowed: ${refusal}` };
  }
  return null;
}

/** Why a proxy at host:port may not be used, in words a tenant may read (no range, no allow-list), or null. */
function refusedAddress(host: string, port: number, policy: AddressPolicy): string | null {
  if (policy.isHostAllowed(host, port)) return null;
  if (isIP(host)) return policy.blockedReason(host, port) ? 'its address is loopback, private, link-local or otherwise not reachable by crawls' : null;
  const name = host.replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'localhost is this machine, which crawls may not reach';
  return null;
}

/** The allow-list as the environment says now (read per check: a short string, and tests change it). */
function defaultPolicy(): AddressPolicy {
  return AddressPolicy.fromEnv();
}
