import { describe, expect, it } from 'vitest';
import { UnsafeAddressError, unsafeAddressLogFields } from '../errors.ts';
import { AddressPolicy } from './address-policy.ts';
import { parseAllowList } from './allow-list.ts';
import { embeddedV4s } from './embedded-v4.ts';
import { cidrContains, formatIp, parseCidr, parseIp } from './ip-address.ts';
import { SafeResolver } from './safe-resolver.ts';

const policy = new AddressPolicy();

describe('AddressPolicy', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.1.1',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1',
    '[::1]',
  ])('refuses %s', (ip) => {
    expect(policy.blockedReason(ip, 80)).not.toBeNull();
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])('allows %s', (ip) => {
    expect(policy.blockedReason(ip, 80)).toBeNull();
  });

  it.each([
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'],
    ['2002:c0a8:101:1::5', '6to4 of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1 (XOR-ed)'],
    ['2001:0:4136:e378:8000:63bf:3f57:fefe', 'Teredo, client 192.168.1.1 (XOR-ed)'],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'Teredo, server 10.0.0.1, public client'],
    ['64:ff9b:1::7f00:1', 'NAT64 local-use prefix, 127.0.0.1'],
    ['64:ff9b:1::808:808', 'NAT64 local-use prefix: not globally routed whatever it embeds'],
    ['::ffff:0:7f00:1', 'SIIT translated 127.0.0.1'],
    ['2606:4700::5efe:7f00:1', 'ISATAP interface id with 127.0.0.1'],
    ['2606:4700::200:5efe:a9fe:a9fe', 'ISATAP (global bit) with 169.254.169.254'],
    ['::127.0.0.1', 'IPv4-compatible 127.0.0.1'],
    ['3fff::1', 'documentation (RFC 9637)'],
    ['5f00::1', 'SRv6 SID'],
  ])('refuses %s (%s)', (ip) => {
    expect(policy.blockedReason(ip, 80)).not.toBeNull();
  });

  it.each([
    ['2002:808:808::1', '6to4 of a public address'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo, public server and client'],
    ['2606:4700::200:5efe:808:808', 'ISATAP with a public address'],
  ])('allows %s (%s)', (ip) => {
    expect(policy.blockedReason(ip, 443)).toBeNull();
  });

  it('names the IPv4 address and the form in the reason', () => {
    expect(policy.blockedReason('2002:7f00:1::', 80)).toBe('2002:7f00:1:0:0:0:0:0 leads to 127.0.0.1 (6to4), in 127.0.0.0/8');
    expect(policy.blockedReason('2001:0:4136:e378:8000:63bf:80ff:fffe', 80)).toMatch(/leads to 127\.0\.0\.1 \(teredo-client\)/);
  });

  it('opens CIDRs and host names from the allow-list', () => {
    const open = new AddressPolicy(parseAllowList(' 127.0.0.0/8 , ::1, Demo.Local,,10.0.0.5'));
    expect(open.blockedReason('127.0.0.1', 8123)).toBeNull();
    expect(open.blockedReason('::ffff:127.0.0.1', 80)).toBeNull();
    expect(open.blockedReason('2002:7f00:1::', 80)).toBeNull();
    expect(open.blockedReason('::1', 80)).toBeNull();
    expect(open.blockedReason('10.0.0.5', 80)).toBeNull();
    expect(open.blockedReason('10.0.0.6', 80)).not.toBeNull();
    expect(open.isHostAllowed('demo.local', 1)).toBe(true);
    expect(open.isHostAllowed('demo.local.', 65535)).toBe(true);
    expect(open.isHostAllowed('other.local', 80)).toBe(false);
  });

  it('opens an address or a name on its listed ports only', () => {
    const open = new AddressPolicy(parseAllowList('127.0.0.1:8090,127.0.0.1:18000-18999,[::1]:8090,localhost:8090,10.0.0.0/8:443'));
    expect(open.blockedReason('127.0.0.1', 8090)).toBeNull();
    expect(open.blockedReason('127.0.0.1', 18000)).toBeNull();
    expect(open.blockedReason('127.0.0.1', 18999)).toBeNull();
    expect(open.blockedReason('::1', 8090)).toBeNull();
    expect(open.blockedReason('::ffff:127.0.0.1', 8090)).toBeNull();
    expect(open.blockedReason('10.20.30.40', 443)).toBeNull();
    for (const [ip, port] of [['127.0.0.1', 8123], ['127.0.0.1', 17999], ['127.0.0.1', 19000], ['::1', 8123], ['::ffff:127.0.0.1', 5432], ['2002:7f00:1::', 8123], ['10.20.30.40', 80], ['127.0.0.2', 8090]] as const) {
      expect(open.blockedReason(ip, port), `${ip}:${port}`).not.toBeNull();
    }
    expect(open.blockedReason('127.0.0.1', 8123)).toBe('127.0.0.1 is in 127.0.0.0/8 (TRAWL_FETCH_ALLOW opens it on other ports only: 127.0.0.1:8090, 127.0.0.1:18000-18999)');
    expect(open.isHostAllowed('localhost', 8090)).toBe(true);
    expect(open.isHostAllowed('LOCALHOST', 8123)).toBe(false);
  });

  it('reads TRAWL_FETCH_ALLOW, and refuses to start on a bad entry', () => {
    expect(AddressPolicy.fromEnv({ TRAWL_FETCH_ALLOW: '192.168.0.0/16' }).blockedReason('192.168.3.4', 80)).toBeNull();
    expect(AddressPolicy.fromEnv({}).blockedReason('192.168.3.4', 80)).not.toBeNull();
    expect(() => AddressPolicy.fromEnv({ TRAWL_FETCH_ALLOW: '127.0.0.1:8090,127.0.0.1:99999' })).toThrow('TRAWL_FETCH_ALLOW entry "127.0.0.1:99999": port 99999 is not in 1-65535');
  });
});

describe('ip-address', () => {
  it('parses and formats IPv6 with :: and a dotted tail', () => {
    expect(formatIp(parseIp('::ffff:1.2.3.4')!)).toBe('0:0:0:0:0:ffff:102:304');
    expect(formatIp(parseIp('fe80::1%eth0')!)).toBe('fe80:0:0:0:0:0:0:1');
    expect(parseIp('example.com')).toBeNull();
  });
  it('unwraps the IPv4 addresses an IPv6 address leads to', () => {
    const unwrap = (ip: string) => embeddedV4s(parseIp(ip)!).map((e) => `${e.form} ${formatIp(e.v4)}`);
    expect(unwrap('::ffff:7f00:1')).toEqual(['mapped 127.0.0.1']);
    expect(unwrap('::ffff:0:a00:1')).toEqual(['translated 10.0.0.1']);
    expect(unwrap('::a00:1')).toEqual(['compatible 10.0.0.1']);
    expect(unwrap('64:ff9b::a9fe:a9fe')).toEqual(['nat64 169.254.169.254']);
    expect(unwrap('64:ff9b:1::a00:1')).toEqual(['nat64-local 10.0.0.1']);
    expect(unwrap('2002:c000:204::1')).toEqual(['6to4 192.0.2.4']);
    // RFC 4380's own example: server 65.54.227.120, client 192.0.2.45 (stored XOR-ed as 3fff:fdd2).
    expect(unwrap('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['teredo-client 192.0.2.45', 'teredo-server 65.54.227.120']);
    expect(unwrap('fe80::5efe:c0a8:101')).toEqual(['isatap 192.168.1.1']);
    expect(unwrap('fe80::200:5efe:808:808')).toEqual(['isatap 8.8.8.8']);
    expect(unwrap('::1')).toEqual([]);
    expect(unwrap('::')).toEqual([]);
    expect(unwrap('2001:db8::1')).toEqual([]);
    expect(unwrap('2606:4700::1111')).toEqual([]);
    expect(embeddedV4s(parseIp('127.0.0.1')!)).toEqual([]);
  });
  it('matches CIDR prefixes that are not byte-aligned', () => {
    const c = parseCidr('172.16.0.0/12')!;
    expect(cidrContains(c, parseIp('172.31.0.1')!)).toBe(true);
    expect(cidrContains(c, parseIp('172.32.0.1')!)).toBe(false);
    expect(parseCidr('1.2.3.4/33')).toBeNull();
  });
});

describe('SafeResolver', () => {
  const fake = (table: Record<string, string[]>) => async (host: string) => {
    const list = table[host];
    if (!list) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  it('refuses a name when any of its addresses is forbidden', async () => {
    const r = new SafeResolver(policy, { resolve: fake({ 'mixed.test': ['93.184.216.34', '10.0.0.1'], 'ok.test': ['93.184.216.34'] }) });
    await expect(r.resolve('mixed.test', 80)).rejects.toBeInstanceOf(UnsafeAddressError);
    await expect(r.resolve('ok.test', 80)).resolves.toHaveLength(1);
  });

  it('checks IP literals, including the forms WHATWG URL canonicalises', async () => {
    const r = new SafeResolver(policy, { resolve: fake({}) });
    for (const u of ['http://2130706433/', 'http://0x7f.1/', 'http://017700000001/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/latest', 'http://[fd00:ec2::254]/']) {
      await expect(r.checkUrl(u), u).rejects.toBeInstanceOf(UnsafeAddressError);
    }
    await expect(r.checkUrl('http://8.8.8.8/')).resolves.toBeUndefined();
  });

  it('checks the port a URL connects to: explicit, or the default of its scheme', async () => {
    const dns = fake({ 'loop.test': ['127.0.0.1'] });
    const r = new SafeResolver(new AddressPolicy(parseAllowList('127.0.0.1:8090,127.0.0.1:443,loop.test:80')), { resolve: dns });
    await expect(r.checkUrl('http://127.0.0.1:8090/jobs')).resolves.toBeUndefined();
    await expect(r.checkUrl('https://127.0.0.1/')).resolves.toBeUndefined();
    await expect(r.checkUrl('http://loop.test/')).resolves.toBeUndefined();
    for (const u of ['http://127.0.0.1:8123/?query=SELECT%201', 'http://127.0.0.1/', 'http://[::ffff:127.0.0.1]:8123/', 'http://loop.test:8123/', 'https://loop.test:8443/', 'ws://127.0.0.1:8123/']) {
      await expect(r.checkUrl(u), u).rejects.toBeInstanceOf(UnsafeAddressError);
    }
  });

  it('refuses the URL tricks: IDN, percent-encoding, userinfo, IPv6 and numeric spellings, names resolving to loopback or metadata', async () => {
    const dns = fake({ 'xn--bcher-kva.test': ['127.0.0.1'], 'loop.test': ['127.0.0.1'], 'metadata.test': ['169.254.169.254'], 'v6.test': ['::1'], 'public.test': ['93.184.216.34'] });
    const r = new SafeResolver(policy, { resolve: dns });
    const tricks = [
      'http://１２７.０.０.１/', // full-width digits: IDNA maps them to 127.0.0.1
      'http://%31%32%37.0.0.1/', // percent-encoded host
      'http://127.1/',
      'http://0177.0.0.1/',
      'http://0x7f000001/',
      'http://0/',
      'http://example.com@127.0.0.1/', // userinfo: the host is what follows the @
      'http://user:pass@169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://[::]/',
      'http://[::ffff:7f00:1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://bücher.test/', // IDN: resolved as its punycode name
      'http://loop.test/',
      'http://LOOP.test:8080/',
      'http://metadata.test/latest/meta-data/',
      'http://v6.test/',
    ];
    for (const u of tricks) await expect(r.checkUrl(u), u).rejects.toBeInstanceOf(UnsafeAddressError);
    // An IPv6 zone id is no valid URL host at all.
    await expect(r.checkUrl('http://[fe80::1%25eth0]/')).rejects.toThrow('Invalid URL');
    // What looks like an address in the userinfo is not the host.
    await expect(r.checkUrl('http://127.0.0.1@public.test/')).resolves.toBeUndefined();
    // The allow-list opens them, for local use and tests.
    const open = new SafeResolver(new AddressPolicy(parseAllowList('127.0.0.0/8,::1')), { resolve: dns });
    for (const u of ['http://loop.test/', 'http://example.com@127.0.0.1/', 'http://0x7f000001/', 'http://[::1]/', 'http://bücher.test/']) await expect(open.checkUrl(u), u).resolves.toBeUndefined();
    await expect(open.checkUrl('http://metadata.test/')).rejects.toBeInstanceOf(UnsafeAddressError);
  });

  it('tells the tenant a refusal and its code, never the address a name resolved to nor the range: those are for the log', async () => {
    const r = new SafeResolver(new AddressPolicy(parseAllowList('10.0.0.0/8:443')), { resolve: fake({ 'intranet.test': ['10.20.30.40'], 'v6.test': ['fd00::7'] }) });
    const refusals = await Promise.all(['http://intranet.test:8080/', 'http://v6.test/', 'http://[::ffff:10.1.1.1]:80/', 'http://127.0.0.1:8123/'].map((u) => r.checkUrl(u).catch((e: unknown) => e)));
    for (const err of refusals) {
      expect(err).toBeInstanceOf(UnsafeAddressError);
      expect((err as Error).message).toBe('refused: the address is not allowed (TRAWL_UNSAFE_ADDRESS)');
      expect(unsafeAddressLogFields(err)?.egress.detail).toMatch(/^refused /);
    }
    expect(unsafeAddressLogFields(refusals[0])).toEqual({
      egress: { host: 'intranet.test', address: '10.20.30.40', detail: 'refused intranet.test:8080: 10.20.30.40 is in 10.0.0.0/8 (TRAWL_FETCH_ALLOW opens it on other ports only: 10.0.0.0/8:443)' },
    });
    expect(unsafeAddressLogFields(new Error('other'))).toBeNull();
  });

  it('maps NXDOMAIN to a non-retriable error and shares concurrent lookups', async () => {
    let calls = 0;
    const r = new SafeResolver(policy, {
      resolve: async (h) => {
        calls++;
        return fake({ 'a.test': ['8.8.8.8'] })(h);
      },
    });
    await Promise.all([r.resolve('a.test', 80), r.resolve('a.test', 443), r.resolve('A.test', 80)]);
    expect(calls).toBe(1);
    await expect(r.resolve('nx.test', 80)).rejects.toMatchObject({ code: 'TRAWL_DNS_NOT_FOUND', retriable: false });
  });

  it('gives net.connect the addresses checked for its port, filtered by family', async () => {
    const r = new SafeResolver(new AddressPolicy(parseAllowList('127.0.0.1:8090')), { resolve: fake({ 'pin.test': ['127.0.0.1', '8.8.8.8'] }) });
    const lookup = r.lookupFor(8090);
    const all = await new Promise((res) => lookup('pin.test', { all: true }, (_e, a) => res(a)));
    expect(all).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '8.8.8.8', family: 4 },
    ]);
    const one = await new Promise((res) => lookup('pin.test', { family: 4 }, (_e, a, f) => res([a, f])));
    expect(one).toEqual(['127.0.0.1', 4]);
    const err = await new Promise((res) => lookup('pin.test', { family: 6 }, (e) => res(e?.code)));
    expect(err).toBe('ENOTFOUND');
    const refused = await new Promise((res) => r.lookupFor(8123)('pin.test', { all: true }, (e) => res(e)));
    expect(refused).toBeInstanceOf(UnsafeAddressError);
  });
});
