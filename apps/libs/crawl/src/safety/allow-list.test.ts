import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../errors.ts';
import { parseAllowEntry, parseAllowList } from './allow-list.ts';
import { formatIp } from './ip-address.ts';

/** An entry as `kind value ports`, for compact expectations. */
function show(entry: string): string {
  const e = parseAllowEntry(entry);
  const what = e.cidr ? `cidr ${formatIp(e.cidr.bytes)}/${e.cidr.prefix}` : `host ${e.host}`;
  return `${what} ${e.ports ? `${e.ports.from}-${e.ports.to}` : 'all'}`;
}

describe('TRAWL_FETCH_ALLOW grammar', () => {
  it.each([
    ['127.0.0.1', 'cidr 127.0.0.1/32 all'],
    ['10.0.0.0/8', 'cidr 10.0.0.0/8 all'],
    ['::1', 'cidr 0:0:0:0:0:0:0:1/128 all'],
    ['::1/128', 'cidr 0:0:0:0:0:0:0:1/128 all'],
    ['fd00::/8', 'cidr fd00:0:0:0:0:0:0:0/8 all'],
    ['::1:8090', 'cidr 0:0:0:0:0:0:1:8090/128 all'], // an address, not ::1 on port 8090
    ['127.0.0.1:8090', 'cidr 127.0.0.1/32 8090-8090'],
    ['127.0.0.1:18000-18999', 'cidr 127.0.0.1/32 18000-18999'],
    ['10.0.0.0/8:443', 'cidr 10.0.0.0/8 443-443'],
    ['[::1]', 'cidr 0:0:0:0:0:0:0:1/128 all'],
    ['[::1]:8090', 'cidr 0:0:0:0:0:0:0:1/128 8090-8090'],
    ['[fd00::/8]:443', 'cidr fd00:0:0:0:0:0:0:0/8 443-443'],
    ['[fd00::]/8:1-1024', 'cidr fd00:0:0:0:0:0:0:0/8 1-1024'],
    ['localhost', 'host localhost all'],
    ['localhost:8090', 'host localhost 8090-8090'],
    ['Demo.Internal.', 'host demo.internal all'],
    ['bücher.test:80', 'host xn--bcher-kva.test 80-80'],
    ['my_host-1.lan:1-65535', 'host my_host-1.lan 1-65535'],
  ])('reads %s', (entry, expected) => {
    expect(show(entry)).toBe(expected);
  });

  it('reads a list, skipping blanks and spaces around entries', () => {
    const list = parseAllowList(' 127.0.0.1:8090 ,, [::1]:8090,localhost:8090 ,');
    expect(list.entries.map((e) => e.text)).toEqual(['127.0.0.1:8090', '[::1]:8090', 'localhost:8090']);
    expect(parseAllowList(undefined).entries).toEqual([]);
    expect(parseAllowList('').entries).toEqual([]);
  });

  it.each([
    ['127.0.0.1:99999', 'port 99999 is not in 1-65535'],
    ['127.0.0.1:0', 'port 0 is not in 1-65535'],
    ['127.0.0.1:9000-8000', 'port range 9000-8000 is empty'],
    ['127.0.0.1:http', '"http" is not a port or a port range'],
    ['127.0.0.1:', '"" is not a port or a port range'],
    ['localhost:80:90', '"localhost:80:90" is not an IPv6 address or block'],
    ['1.2.3.4/33', '"1.2.3.4/33" is not an address block'],
    ['10.0.0.0/x:80', '"10.0.0.0/x" is not an address block'],
    ['[::1', '"[" without "]"'],
    ['[::1]8090', 'unexpected "8090" after "]"'],
    ['[127.0.0.1]:80', 'brackets are for IPv6 addresses'],
    ['[localhost]:80', '"localhost" is not an IPv6 address or block'],
    ['http://127.0.0.1:8090', 'a URL, not an entry'],
    ['*.example.com', 'wildcards are not supported'],
    ['127.1', '"127.1" is neither a host name nor an IPv4 address in dotted-quad form'],
    ['0x7f000001:80', 'is neither a host name nor an IPv4 address in dotted-quad form'],
    ['exa mple.com', 'contains white space'],
    ['bad!host', '"bad!host" is not a host name, an address or an address block'],
    [':8090', 'no host'],
  ])('refuses %s with a message that says why', (entry, why) => {
    expect(() => parseAllowEntry(entry)).toThrow(why);
  });

  it('names the variable and the entry in the error, and stops at the first bad one', () => {
    let err: unknown;
    try {
      parseAllowList('127.0.0.1:8090, 127.0.0.1:8o90 ,localhost');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidConfigError);
    expect(err).toMatchObject({ code: 'TRAWL_INVALID_CONFIG', retriable: false });
    expect((err as Error).message).toBe('TRAWL_FETCH_ALLOW entry "127.0.0.1:8o90": "8o90" is not a port or a port range (8090, 18000-18999)');
  });
});
