import { domainToASCII } from 'node:url';
import { InvalidConfigError } from '../errors.ts';
import { parseCidr, type Cidr } from './ip-address.ts';

/** An inclusive range of TCP ports. */
export interface PortRange {
  readonly from: number;
  readonly to: number;
}

/**
 * One exception to the address policy: an address block or a host name, on every port (`ports`
 * null) or on some. A host-name entry opens the name whatever it resolves to; an address entry
 * opens the addresses whatever name leads to them.
 */
export interface AllowEntry {
  /** As written, for messages. */
  readonly text: string;
  readonly cidr: Cidr | null;
  /** Lower case, ASCII (punycode), without a trailing dot. */
  readonly host: string | null;
  readonly ports: PortRange | null;
}

export interface AllowList {
  readonly entries: readonly AllowEntry[];
}

export const EMPTY_ALLOW_LIST: AllowList = { entries: [] };

/**
 * Parses `TRAWL_FETCH_ALLOW`, a comma list of entries:
 *
 * | entry | opens |
 * |---|---|
 * | `10.0.0.0/8`, `127.0.0.1`, `::1`, `fd00::/8` | those addresses, every port |
 * | `127.0.0.1:8090`, `127.0.0.1:18000-18999`, `10.0.0.0/8:443` | those addresses, those ports |
 * | `[::1]:8090`, `[fd00::/8]:443` | IPv6 with a port: in brackets (`::1:8090` is an address) |
 * | `localhost`, `demo.internal:8090` | that name, every port or those ports |
 *
 * A bad entry is an {@link InvalidConfigError} that quotes it: a typo must stop the service at start,
 * not open or close something else than meant.
 */
export function parseAllowList(text: string | undefined, variable = 'TRAWL_FETCH_ALLOW'): AllowList {
  const entries: AllowEntry[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    try {
      entries.push(parseAllowEntry(entry));
    } catch (err) {
      throw new InvalidConfigError(`${variable} entry "${entry}": ${(err as Error).message}`, { cause: err });
    }
  }
  return { entries };
}

/** One entry; throws a plain Error saying what is wrong with it. */
export function parseAllowEntry(entry: string): AllowEntry {
  const text = entry.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw new Error('a URL, not an entry: write host or address, optionally :port');
  if (/\s/.test(text)) throw new Error('contains white space');
  let hostPart: string;
  let portPart: string | null = null;
  let bracketed = false;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1) throw new Error('"[" without "]"');
    bracketed = true;
    hostPart = text.slice(1, close);
    let rest = text.slice(close + 1);
    // `[fd00::]/8:443` as well as `[fd00::/8]:443`
    const prefix = /^\/\d+/.exec(rest);
    if (prefix) {
      hostPart += prefix[0];
      rest = rest.slice(prefix[0].length);
    }
    if (rest !== '') {
      if (!rest.startsWith(':')) throw new Error(`unexpected "${rest}" after "]"`);
      portPart = rest.slice(1);
    }
  } else {
    const colons = text.split(':').length - 1;
    if (colons === 1) {
      [hostPart, portPart] = text.split(':') as [string, string];
    } else {
      hostPart = text; // none, or an IPv6 address / block (several colons)
    }
  }
  const ports = portPart === null ? null : parsePorts(portPart);
  const cidr = parseCidr(hostPart);
  if (cidr) {
    if (bracketed && cidr.bytes.length !== 16) throw new Error('brackets are for IPv6 addresses');
    return { text, cidr, host: null, ports };
  }
  if (bracketed || hostPart.includes(':')) throw new Error(`"${hostPart}" is not an IPv6 address or block (an IPv6 address with a port is written [::1]:8090)`);
  if (hostPart.includes('/')) throw new Error(`"${hostPart}" is not an address block (a.b.c.d/len)`);
  return { text, cidr: null, host: parseHostName(hostPart), ports };
}

function parsePorts(text: string): PortRange {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  if (!m) throw new Error(`"${text}" is not a port or a port range (8090, 18000-18999)`);
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  for (const p of [from, to]) if (p < 1 || p > 65535) throw new Error(`port ${p} is not in 1-65535`);
  if (to < from) throw new Error(`port range ${from}-${to} is empty`);
  return { from, to };
}

function parseHostName(text: string): string {
  if (text === '') throw new Error('no host');
  if (text.includes('*')) throw new Error('wildcards are not supported: list each host, or an address block');
  const name = text.toLowerCase().replace(/\.$/, '');
  const ascii = domainToASCII(name);
  if (ascii === '' || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(ascii)) throw new Error(`"${text}" is not a host name, an address or an address block`);
  // A URL never carries a host like `127.1` or `10.1.2`: WHATWG URL reads them as IPv4 addresses.
  if (/^\d+$/.test(ascii.split('.').pop()!) || /^0x[0-9a-f]*$/.test(ascii.split('.').pop()!)) {
    throw new Error(`"${text}" is neither a host name nor an IPv4 address in dotted-quad form (a.b.c.d)`);
  }
  return ascii;
}

export function portInRange(ports: PortRange | null, port: number): boolean {
  return ports === null || (port >= ports.from && port <= ports.to);
}

