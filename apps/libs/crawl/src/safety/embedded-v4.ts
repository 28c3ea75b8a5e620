import type { IpBytes } from './ip-address.ts';

/**
 * The IPv6 forms that lead to an IPv4 address. A connection to one of them ends at that IPv4
 * address (through the kernel, a NAT64 gateway, a 6to4 or Teredo relay), so the address policy
 * judges the IPv4 address as well as the IPv6 one: `http://[2002:7f00:1::]/` must be refused like
 * `http://127.0.0.1/`.
 *
 * - `mapped` `::ffff:a.b.c.d` (RFC 4291): the kernel connects to the IPv4 address itself.
 * - `translated` `::ffff:0:a.b.c.d` (RFC 2765, SIIT).
 * - `compatible` `::a.b.c.d` (deprecated by RFC 4291), except `::` and `::1`.
 * - `nat64` `64:ff9b::/96` (RFC 6052 well-known prefix) and `nat64-local` `64:ff9b:1::/48`
 *   (RFC 8215, local use; read as a /96 prefix, the only length a resolver can synthesise without
 *   knowing the network; the whole /48 is refused anyway, it is not globally reachable).
 * - `6to4` `2002:AABB:CCDD::/48` (RFC 3056): bits 16–47.
 * - `teredo-client` and `teredo-server` `2001:0000::/32` (RFC 4380): the server in bits 32–63, the
 *   client in the last 32 bits with every bit inverted.
 * - `isatap` `…:0000:5efe:a.b.c.d` or `…:0200:5efe:a.b.c.d` (RFC 5214), under any prefix: the
 *   interface identifier carries the tunnel end point.
 *
 * Operator-chosen NAT64 prefixes (RFC 6052 network-specific) and 6rd prefixes cannot be recognised
 * from the address alone; they are the operator's network, and its routes decide.
 */
export type TransitionForm = 'mapped' | 'translated' | 'compatible' | 'nat64' | 'nat64-local' | '6to4' | 'teredo-client' | 'teredo-server' | 'isatap';

export interface EmbeddedV4 {
  readonly form: TransitionForm;
  readonly v4: IpBytes;
}

/** Every IPv4 address `bytes` (an IPv6 address) leads to; empty for IPv4 and for plain IPv6. */
export function embeddedV4s(bytes: IpBytes): EmbeddedV4[] {
  if (bytes.length !== 16) return [];
  const b = bytes;
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  const last32 = () => b.slice(12, 16);
  const out: EmbeddedV4[] = [];
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) out.push({ form: 'mapped', v4: last32() });
  else if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) out.push({ form: 'translated', v4: last32() });
  else if (zero(0, 12) && !(zero(12, 15) && b[15]! <= 1)) out.push({ form: 'compatible', v4: last32() });
  else if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zero(4, 12)) out.push({ form: 'nat64', v4: last32() });
    else if (b[4] === 0x00 && b[5] === 0x01) out.push({ form: 'nat64-local', v4: last32() });
  } else if (b[0] === 0x20 && b[1] === 0x02) out.push({ form: '6to4', v4: b.slice(2, 6) });
  else if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) {
    out.push({ form: 'teredo-client', v4: b.slice(12, 16).map((x) => x ^ 0xff) });
    out.push({ form: 'teredo-server', v4: b.slice(4, 8) });
  }
  if ((b[8] === 0x00 || b[8] === 0x02) && b[9] === 0x00 && b[10] === 0x5e && b[11] === 0xfe) out.push({ form: 'isatap', v4: last32() });
  return out;
}
