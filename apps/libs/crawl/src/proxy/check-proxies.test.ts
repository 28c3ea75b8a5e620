import { describe, expect, it } from 'vitest';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { checkProxies, MAX_PROXIES } from './check-proxies.ts';

const p = (url: string, username: unknown = null, password: unknown = null) => ({ url, username, password });
const strict = new AddressPolicy();

describe('checkProxies', () => {
  it('accepts public http, https and socks5 proxies with credentials as fields', () => {
    expect(checkProxies([p('http://203.0.114.7:3128'), p('https://proxy.example'), p('socks5://proxy.example:1080', 'u', { secret: 'proxy-pass' })], '', strict)).toBeNull();
    expect(checkProxies(undefined, '', strict)).toBeNull();
  });

  it('refuses other schemes, paths, credentials in the URL and a password without a user (INVALID_PROXY)', () => {
    expect(checkProxies([p('socks4://proxy.example:1080')], '', strict)).toMatchObject({ code: 'INVALID_PROXY', field: 'proxies[0]' });
    expect(checkProxies([p('http://proxy.example/x')], '', strict)).toMatchObject({ code: 'INVALID_PROXY' });
    const creds = checkProxies([p('http://proxy.example:3128'), p('http://user:hunter2@proxy.example:8080')], 'request.', strict)!;
    expect(creds).toMatchObject({ code: 'INVALID_PROXY', field: 'request.proxies[1]' });
    expect(creds.message).not.toContain('hunter2');
    expect(checkProxies([p('http://proxy.example:3128', null, 'pw')], '', strict)).toMatchObject({ code: 'INVALID_PROXY' });
    expect(checkProxies([p('http://proxy.example:3128'), p('http://proxy.example:3128')], '', strict)).toMatchObject({ code: 'INVALID_PROXY', field: 'proxies[1]' });
    expect(checkProxies(Array.from({ length: MAX_PROXIES + 1 }, (_, i) => p(`http://proxy.example:${1000 + i}`)), '', strict)).toMatchObject({ code: 'INVALID_PROXY', field: 'proxies' });
  });

  it('refuses loopback, private and metadata addresses and localhost (PROXY_NOT_ALLOWED), unless the allow-list opens them', () => {
    for (const url of ['http://127.0.0.1:5432', 'socks5://10.0.0.8:1080', 'http://169.254.169.254', 'http://[::1]:9092', 'http://[::ffff:127.0.0.1]:8123', 'http://localhost:3128', 'socks5://db.localhost:1080']) {
      const problem = checkProxies([p(url)], '', strict)!;
      expect(problem, url).toMatchObject({ code: 'PROXY_NOT_ALLOWED', field: 'proxies[0]' });
      expect(problem.message).not.toMatch(/127\.0\.0\.0\/8|10\.0\.0\.0/);
    }
    const harness = new AddressPolicy(parseAllowList('127.0.0.1:18000-18999'));
    expect(checkProxies([p('http://127.0.0.1:18080')], '', harness)).toBeNull();
    // Opened on some ports only: the stack's port next to them stays shut.
    expect(checkProxies([p('http://127.0.0.1:5432')], '', harness)).toMatchObject({ code: 'PROXY_NOT_ALLOWED' });
  });
});
