import type { AllowEntry, AllowList, PortRange } from './allow-list.ts';
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr, type IpBytes } from './ip-address.ts';

/**
 * Which `TRAWL_FETCH_ALLOW` entries open a port of Trawl's own stack to tenants' crawls.
 *
 * The allow-list exists for the demo site and test servers on this machine; the same machine runs
 * Postgres, ClickHouse, Kafka, the registry, S3 and every service's operator port. An entry such as
 * `127.0.0.0/8` or `localhost` (every port) hands all of them to whoever submits a URL, which is how
 * an allow-list inherited from a developer's shell silently reopened the stack. This is the pure
 * half of the guard (egress-guard.ts is the other): given the list, the stack's listeners and what
 * their names resolve to, it says which entry reaches which listener on which ports.
 *
 * "Reaches" follows the kernel, not the text: a listener on 127.0.0.1 also answers at 0.0.0.0 and at
 * `::ffff:127.0.0.1`; one on 0.0.0.0 answers at every loopback address and every address of the
 * machine; a host-name entry reaches what the name resolves to. What this cannot know is left to its
 * caller: the addresses names resolve to (`names`) and the machine's own (`local`).
 */

/** A port the stack listens on, from configuration (streams' `stackListeners()`). */
export interface StackListener {
  /** What listens there, for messages: `ClickHouse HTTP (CLICKHOUSE_URL)`. */
  readonly name: string;
  /** Where, as configured: an address, a host name, or a wildcard (`0.0.0.0`, `::`). */
  readonly host: string;
  readonly ports: PortRange;
}

/** One entry that opens (some of) one listener's ports. */
export interface StackExposure {
  readonly entry: AllowEntry;
  readonly listener: StackListener;
  /** The listener's ports the entry opens. */
  readonly ports: PortRange;
}

export interface KnownAddresses {
  /** What host names resolve to (the entries' and the listeners'). `localhost` defaults to 127.0.0.1 and ::1. */
  readonly names?: ReadonlyMap<string, readonly string[]>;
  /** This machine's own addresses: where a listener on a wildcard address answers besides loopback. */
  readonly local?: readonly string[];
}

const ALL_PORTS: PortRange = { from: 1, to: 65535 };
const LOCALHOST = ['127.0.0.1', '::1'];
const cidr = (text: string): Cidr => parseCidr(text)!;
const LOOPBACK_V4 = cidr('127.0.0.0/8');

/** Every (entry, listener) pair where the entry opens one of the listener's ports: by entry, then listener, in their orders. */
export function stackExposures(allow: AllowList, listeners: readonly StackListener[], known: KnownAddresses = {}): StackExposure[] {
  const places = listeners.map((listener) => ({ listener, host: hostKey(listener.host), reach: reachOf(listener.host, known) }));
  const out: StackExposure[] = [];
  for (const entry of allow.entries) {
    const entryAddresses = entry.host ? addressesOf(entry.host, known) : [];
    for (const { listener, host, reach } of places) {
      const ports = overlap(entry.ports ?? ALL_PORTS, listener.ports);
      if (!ports) continue;
      const covers = entry.cidr ? reach.some((r) => intersects(entry.cidr!, r)) : entry.host === host || entryAddresses.some((a) => reach.some((r) => cidrContains(r, a)));
      if (covers) out.push({ entry, listener, ports });
    }
  }
  return out;
}

/** `Postgres (DATABASE_URL) on 127.0.0.1:5432`: the listener and the ports of it an entry opens. */
function describeListenerPorts(e: StackExposure): string {
  const { from, to } = e.ports;
  const host = e.listener.host.includes(':') && !e.listener.host.startsWith('[') ? `[${e.listener.host}]` : e.listener.host;
  return `${e.listener.name} on ${host}:${from === to ? from : `${from}-${to}`}`;
}

/** One clause per entry, naming what it opens: `entry "localhost" covers Postgres (DATABASE_URL) on 127.0.0.1:5432, …`. */
export function describeExposures(exposures: readonly StackExposure[]): string {
  const byEntry = new Map<string, string[]>();
  for (const e of exposures) {
    const list = byEntry.get(e.entry.text) ?? [];
    list.push(describeListenerPorts(e));
    byEntry.set(e.entry.text, list);
  }
  return [...byEntry].map(([entry, what]) => `entry "${entry}" covers ${what.join(', ')}`).join('; ');
}

/** The address blocks a listener on `host` answers at. */
function reachOf(host: string, known: KnownAddresses): Cidr[] {
  const ip = parseIp(host);
  const addresses = ip ? [ip] : addressesOf(host, known);
  const out: Cidr[] = [];
  for (const a of addresses) out.push(...reachOfAddress(a, known));
  // An IPv4 listener answers at its IPv4-mapped IPv6 address too (`http://[::ffff:127.0.0.1]:8123/`).
  return out.flatMap((c) => (c.bytes.length === 4 ? [c, mapped(c)] : [c]));
}

function reachOfAddress(a: IpBytes, known: KnownAddresses): Cidr[] {
  const text = formatIp(a);
  const local = (known.local ?? []).map(parseIp).filter((l): l is IpBytes => l !== null);
  const v4 = local.filter((l) => l.length === 4).map((l) => cidr(formatIp(l)));
  const v6 = local.filter((l) => l.length === 16).map((l) => cidr(`${formatIp(l)}/128`));
  // Bound to every address: loopback, the unspecified address (connecting to it reaches this host),
  // and each of the machine's own; `::` also takes IPv4 (Linux's dual-stack default).
  if (text === '0.0.0.0') return [LOOPBACK_V4, cidr('0.0.0.0/32'), ...v4];
  if (text === '0:0:0:0:0:0:0:0') return [cidr('::/128'), cidr('::1/128'), ...v6, LOOPBACK_V4, cidr('0.0.0.0/32'), ...v4];
  // Connecting to the unspecified address reaches the loopback listener of its family.
  if (text === '127.0.0.1') return [cidr('127.0.0.1/32'), cidr('0.0.0.0/32')];
  if (text === '0:0:0:0:0:0:0:1') return [cidr('::1/128'), cidr('::/128')];
  return [cidr(a.length === 4 ? text : `${text}/128`)];
}

function addressesOf(name: string, known: KnownAddresses): IpBytes[] {
  const key = hostKey(name);
  const listed = known.names?.get(key) ?? (key === 'localhost' || key.endsWith('.localhost') ? LOCALHOST : []);
  return listed.map(parseIp).filter((a): a is IpBytes => a !== null);
}

function hostKey(host: string): string {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return h.toLowerCase().replace(/\.$/, '');
}

function mapped(c: Cidr): Cidr {
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  bytes.set(c.bytes, 12);
  return { bytes, prefix: c.prefix + 96, text: `::ffff:${formatIp(c.bytes)}/${c.prefix + 96}` };
}

/** Two blocks of one family share an address when the shorter prefix contains the longer's network. */
function intersects(a: Cidr, b: Cidr): boolean {
  if (a.bytes.length !== b.bytes.length) return false;
  return a.prefix <= b.prefix ? cidrContains(a, b.bytes) : cidrContains(b, a.bytes);
}

function overlap(a: PortRange, b: PortRange): PortRange | null {
  const from = Math.max(a.from, b.from);
  const to = Math.min(a.to, b.to);
  return from <= to ? { from, to } : null;
}
