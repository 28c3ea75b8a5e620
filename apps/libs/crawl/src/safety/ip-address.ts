import { isIPv4, isIPv6 } from 'node:net';

/**
 * IP addresses as bytes (4 for IPv4, 16 for IPv6), so that CIDR checks are plain prefix compares and
 * the IPv4 addresses an IPv6 address leads to (see embedded-v4.ts) can be cut out of it.
 */
export type IpBytes = Uint8Array;

export function parseIp(text: string): IpBytes | null {
  const s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv4(s)) return parseV4(s);
  if (isIPv6(s)) return parseV6(s.includes('%') ? s.slice(0, s.indexOf('%')) : s);
  return null;
}

function parseV4(s: string): IpBytes {
  const out = new Uint8Array(4);
  s.split('.').forEach((p, i) => (out[i] = Number(p)));
  return out;
}

function parseV6(s: string): IpBytes {
  const out = new Uint8Array(16);
  let text = s;
  // A trailing dotted quad stands for the last 32 bits.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  let tailV4: IpBytes | null = null;
  if (tail.includes('.')) {
    tailV4 = parseV4(tail);
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head, rest] = text.includes('::') ? (text.split('::') as [string, string]) : [text, null];
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === null || rest === '' ? [] : rest.split(':');
  const groups = rest === null ? headGroups : [...headGroups, ...Array(8 - headGroups.length - restGroups.length).fill('0'), ...restGroups];
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  if (tailV4) out.set(tailV4, 12);
  return out;
}

export function formatIp(bytes: IpBytes): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':');
}

/** A CIDR block: network bytes and prefix length. */
export interface Cidr {
  readonly bytes: IpBytes;
  readonly prefix: number;
  readonly text: string;
}

export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  const ip = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (!ip) return null;
  const max = ip.length * 8;
  const prefix = slash === -1 ? max : Number(text.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { bytes: ip, prefix, text };
}

export function cidrContains(cidr: Cidr, ip: IpBytes): boolean {
  if (cidr.bytes.length !== ip.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((cidr.bytes[i]! & mask) !== (ip[i]! & mask)) return false;
  }
  return true;
}
