import { cidrContains, embeddedV4, formatIp, parseCidr, parseIp, type Cidr, type IpBytes } from './ip-address.ts';

/**
 * Which addresses the crawler may connect to. By default anything that is not the public internet is
 * refused: a crawl of user-supplied URLs must not become a proxy into the machine's own network or
 * the cloud metadata service (SSRF). `TRAWL_FETCH_ALLOW` (comma list of CIDRs and host names) opens
 * exceptions, for the local demo and tests.
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
  '100::/64', // discard-only
  '2001:db8::/32', // documentation
  'fc00::/7', // unique local, incl. fd00:ec2::254 (AWS metadata over IPv6)
  'fe80::/10', // link-local
  'fec0::/10', // old site-local
  'ff00::/8', // multicast
];

const BLOCKED: readonly Cidr[] = BLOCKED_TEXT.map((t) => parseCidr(t)!);

export interface AllowList {
  readonly cidrs: readonly Cidr[];
  readonly hosts: ReadonlySet<string>;
}

/** Parse `TRAWL_FETCH_ALLOW`: `127.0.0.1/32,::1,localhost,demo.internal`. Entries that are not CIDRs/IPs are host names. */
export function parseAllowList(text: string | undefined): AllowList {
  const cidrs: Cidr[] = [];
  const hosts = new Set<string>();
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const cidr = parseCidr(entry);
    if (cidr) cidrs.push(cidr);
    else hosts.add(entry);
  }
  return { cidrs, hosts };
}

export class AddressPolicy {
  constructor(readonly allow: AllowList = { cidrs: [], hosts: new Set() }) {}

  /** The policy from `TRAWL_FETCH_ALLOW`. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): AddressPolicy {
    return new AddressPolicy(parseAllowList(env.TRAWL_FETCH_ALLOW));
  }

  /** A host name on the allow-list skips the address check (its addresses are still pinned). */
  isHostAllowed(hostname: string): boolean {
    const h = stripBrackets(hostname).toLowerCase();
    return this.allow.hosts.has(h);
  }

  /** Why `address` may not be reached, or null when it may. */
  blockedReason(address: string | IpBytes): string | null {
    const ip = typeof address === 'string' ? parseIp(address) : address;
    if (!ip) return 'not an IP address';
    if (this.allow.cidrs.some((c) => cidrContains(c, ip))) return null;
    const v4 = embeddedV4(ip);
    if (v4) {
      if (this.allow.cidrs.some((c) => cidrContains(c, v4))) return null;
      const inner = matchBlocked(v4);
      if (inner) return `${formatIp(ip)} embeds ${formatIp(v4)}, in ${inner}`;
    }
    const block = matchBlocked(ip);
    return block ? `${formatIp(ip)} is in ${block}` : null;
  }
}

function matchBlocked(ip: IpBytes): string | null {
  for (const c of BLOCKED) if (cidrContains(c, ip)) return c.text;
  return null;
}

function stripBrackets(h: string): string {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}
