import { EMPTY_ALLOW_LIST, parseAllowList, portInRange, type AllowList } from './allow-list.ts';
import { embeddedV4s } from './embedded-v4.ts';
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr, type IpBytes } from './ip-address.ts';

/**
 * Which addresses and ports the crawler may connect to. By default anything that is not the public
 * internet is refused: a crawl of user-supplied URLs must not become a proxy into the machine's own
 * network, its databases or the cloud metadata service (SSRF). `TRAWL_FETCH_ALLOW` (see
 * allow-list.ts) opens exceptions by address block or host name, on every port or on some: the local
 * demo needs 127.0.0.1:8090, not the ClickHouse on 127.0.0.1:8123 beside it.
 *
 * An IPv6 address that leads to an IPv4 one (mapped, NAT64, 6to4, Teredo…: embedded-v4.ts) is judged
 * by that IPv4 address too, so no spelling of 127.0.0.1 gets through.
 */
const BLOCKED_TEXT = [
  // IPv4
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches localhost on Linux
  '10.0.0.0/8',
  '100.64.0.0/10', // CGNAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, incl. 169.254.169.254 metadata
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, incl. broadcast
  // IPv6
  '::/128',
  '::1/128',
  '64:ff9b:1::/48', // NAT64 for local use (RFC 8215), never globally routed
  '100::/64', // discard-only
  '2001:2::/48', // benchmarking
  '2001:10::/28', // ORCHID (deprecated)
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation (RFC 9637)
  '5f00::/16', // SRv6 segment identifiers (RFC 9602)
  'fc00::/7', // unique local, incl. fd00:ec2::254 (AWS metadata over IPv6)
  'fe80::/10', // link-local
  'fec0::/10', // old site-local
  'ff00::/8', // multicast
];

const BLOCKED: readonly Cidr[] = BLOCKED_TEXT.map((t) => parseCidr(t)!);

export class AddressPolicy {
  constructor(readonly allow: AllowList = EMPTY_ALLOW_LIST) {}

  /** The policy from `TRAWL_FETCH_ALLOW`; throws InvalidConfigError naming a bad entry. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): AddressPolicy {
    return new AddressPolicy(parseAllowList(env.TRAWL_FETCH_ALLOW));
  }

  /** A host name allowed on this port skips the address check (its addresses are still pinned). */
  isHostAllowed(hostname: string, port: number): boolean {
    const h = stripBrackets(hostname).toLowerCase().replace(/\.$/, '');
    return this.allow.entries.some((e) => e.host === h && portInRange(e.ports, port));
  }

  /** Why a connection to `address` on `port` is refused, or null when it may be made. */
  blockedReason(address: string | IpBytes, port: number): string | null {
    const ip = typeof address === 'string' ? parseIp(address) : address;
    if (!ip) return 'not an IP address';
    if (this.allowsAddress(ip, port)) return null;
    const embedded = embeddedV4s(ip);
    for (const { form, v4 } of embedded) {
      if (this.allowsAddress(v4, port)) continue;
      const inner = matchBlocked(v4);
      if (inner) return `${formatIp(ip)} leads to ${formatIp(v4)} (${form}), in ${inner}${this.portNote(v4)}`;
    }
    // Reached only through allowed IPv4 addresses: as allowed as they are.
    if (embedded.length > 0 && embedded.every(({ v4 }) => this.allowsAddress(v4, port))) return null;
    const block = matchBlocked(ip);
    return block ? `${formatIp(ip)} is in ${block}${this.portNote(ip)}` : null;
  }

  private allowsAddress(ip: IpBytes, port: number): boolean {
    return this.allow.entries.some((e) => e.cidr !== null && cidrContains(e.cidr, ip) && portInRange(e.ports, port));
  }

  /** Says so when the address is allowed, only not on this port: the usual surprise. */
  private portNote(ip: IpBytes): string {
    const open = this.allow.entries.filter((e) => e.cidr !== null && cidrContains(e.cidr, ip));
    return open.length > 0 ? ` (TRAWL_FETCH_ALLOW opens it on other ports only: ${open.map((e) => e.text).join(', ')})` : '';
  }
}

function matchBlocked(ip: IpBytes): string | null {
  for (const c of BLOCKED) if (cidrContains(c, ip)) return c.text;
  return null;
}

function stripBrackets(h: string): string {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}
