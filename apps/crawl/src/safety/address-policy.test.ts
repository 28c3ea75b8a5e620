import { describe, expect, it } from 'vitest';
import { UnsafeAddressError } from '../errors.ts';
import { AddressPolicy, parseAllowList } from './address-policy.ts';
import { cidrContains, embeddedV4, formatIp, parseCidr, parseIp } from './ip-address.ts';
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
    expect(policy.blockedReason(ip)).not.toBeNull();
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])('allows %s', (ip) => {
    expect(policy.blockedReason(ip)).toBeNull();
  });

  it('opens CIDRs and host names from the allow-list', () => {
    const open = new AddressPolicy(parseAllowList(' 127.0.0.0/8 , ::1, Demo.Local,,10.0.0.5'));
    expect(open.blockedReason('127.0.0.1')).toBeNull();
    expect(open.blockedReason('::ffff:127.0.0.1')).toBeNull();
    expect(open.blockedReason('::1')).toBeNull();
    expect(open.blockedReason('10.0.0.5')).toBeNull();
    expect(open.blockedReason('10.0.0.6')).not.toBeNull();
    expect(open.isHostAllowed('demo.local')).toBe(true);
    expect(open.isHostAllowed('other.local')).toBe(false);
  });

  it('reads TRAWL_FETCH_ALLOW', () => {
    expect(AddressPolicy.fromEnv({ TRAWL_FETCH_ALLOW: '192.168.0.0/16' }).blockedReason('192.168.3.4')).toBeNull();
    expect(AddressPolicy.fromEnv({}).blockedReason('192.168.3.4')).not.toBeNull();
  });
});

describe('ip-address', () => {
  it('parses and formats IPv6 with :: and a dotted tail', () => {
    expect(formatIp(parseIp('::ffff:1.2.3.4')!)).toBe('0:0:0:0:0:ffff:102:304');
    expect(formatIp(parseIp('fe80::1%eth0')!)).toBe('fe80:0:0:0:0:0:0:1');
    expect(parseIp('example.com')).toBeNull();
  });
  it('unwraps embedded IPv4', () => {
    expect(formatIp(embeddedV4(parseIp('::ffff:7f00:1')!)!)).toBe('127.0.0.1');
    expect(embeddedV4(parseIp('::1')!)).toBeNull();
    expect(embeddedV4(parseIp('2001:db8::1')!)).toBeNull();
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
    await expect(r.resolve('mixed.test')).rejects.toBeInstanceOf(UnsafeAddressError);
    await expect(r.resolve('ok.test')).resolves.toHaveLength(1);
  });

  it('checks IP literals, including the forms WHATWG URL canonicalises', async () => {
    const r = new SafeResolver(policy, { resolve: fake({}) });
    for (const u of ['http://2130706433/', 'http://0x7f.1/', 'http://017700000001/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/latest', 'http://[fd00:ec2::254]/']) {
      await expect(r.checkUrl(u), u).rejects.toBeInstanceOf(UnsafeAddressError);
    }
    await expect(r.checkUrl('http://8.8.8.8/')).resolves.toBeUndefined();
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

  it('maps NXDOMAIN to a non-retriable error and shares concurrent lookups', async () => {
    let calls = 0;
    const r = new SafeResolver(policy, {
      resolve: async (h) => {
        calls++;
        return fake({ 'a.test': ['8.8.8.8'] })(h);
      },
    });
    await Promise.all([r.resolve('a.test'), r.resolve('a.test'), r.resolve('A.test')]);
    expect(calls).toBe(1);
    await expect(r.resolve('nx.test')).rejects.toMatchObject({ code: 'TRAWL_DNS_NOT_FOUND', retriable: false });
  });

  it('gives net.connect the checked addresses, filtered by family', async () => {
    const r = new SafeResolver(new AddressPolicy(parseAllowList('127.0.0.1')), { resolve: fake({ 'pin.test': ['127.0.0.1', '8.8.8.8'] }) });
    const all = await new Promise((res) => r.lookup('pin.test', { all: true }, (_e, a) => res(a)));
    expect(all).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '8.8.8.8', family: 4 },
    ]);
    const one = await new Promise((res) => r.lookup('pin.test', { family: 4 }, (_e, a, f) => res([a, f])));
    expect(one).toEqual(['127.0.0.1', 4]);
    const err = await new Promise((res) => r.lookup('pin.test', { family: 6 }, (e) => res(e?.code)));
    expect(err).toBe('ENOTFOUND');
  });
});
