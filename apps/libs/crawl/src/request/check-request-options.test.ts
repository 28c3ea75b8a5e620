import { describe, expect, it } from 'vitest';
import { checkRequestOptions, domainCovers, REQUEST_OPTION_LIMITS } from './check-request-options.ts';

const HOSTS = ['shop.example', '127.0.0.1'];
const codeOf = (options: Parameters<typeof checkRequestOptions>[0], hosts: readonly string[] | null = HOSTS) => checkRequestOptions(options, hosts)?.code ?? null;

describe('checking request options', () => {
  it('accepts ordinary options', () => {
    expect(checkRequestOptions({ headers: { 'X-Api-Key': 'k', Authorization: 'Bearer t', Referer: 'https://shop.example/' }, user_agent: 'Mozilla/5.0 (X11)', locale: 'fr-CH', cookies: { 'shop.example': ['consent=yes', 'sid=abc; Path=/; Secure; HttpOnly'], '127.0.0.1': ['a=1'] } }, HOSTS)).toBeNull();
  });

  it.each(['Host', 'host', 'Connection', 'Keep-Alive', 'Proxy-Authorization', 'Proxy-Connection', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade'])('refuses the %s header', (name) => {
    expect(checkRequestOptions({ headers: { [name]: 'x' } }, HOSTS)).toMatchObject({ code: 'HEADER_NOT_ALLOWED', field: `headers.${name}` });
  });

  it.each(['User-Agent', 'Accept-Language', 'Cookie', 'Accept-Encoding', 'Content-Length', 'If-None-Match', 'Range'])('refuses %s, which Trawl sets itself', (name) => {
    expect(codeOf({ headers: { [name]: 'x' } })).toBe('HEADER_NOT_ALLOWED');
  });

  it('refuses CR, LF and NUL in values, names that are not tokens, and a name given twice', () => {
    expect(codeOf({ headers: { 'X-A': 'a\r\nX-Injected: 1' } })).toBe('INVALID_HEADER');
    expect(codeOf({ headers: { 'X-A': 'a\nb' } })).toBe('INVALID_HEADER');
    expect(codeOf({ headers: { 'X-A': 'a\0b' } })).toBe('INVALID_HEADER');
    expect(codeOf({ headers: { 'X-A\r\nEvil': 'a' } })).toBe('INVALID_HEADER');
    expect(codeOf({ headers: { 'X A': 'a' } })).toBe('INVALID_HEADER');
    expect(codeOf({ headers: { ':authority': 'a' } })).toBe('INVALID_HEADER');
    expect(codeOf({ headers: { 'X-A': '1', 'x-a': '2' } })).toBe('INVALID_HEADER');
    expect(codeOf({ user_agent: 'Bot\r\nX: 1' })).toBe('INVALID_HEADER');
    expect(codeOf({ headers: { 'X-A': 'tab\tis fine' } })).toBeNull();
  });

  it('bounds counts and sizes', () => {
    const many = Object.fromEntries(Array.from({ length: REQUEST_OPTION_LIMITS.maxHeaders + 1 }, (_, i) => [`x-${i}`, 'v']));
    expect(codeOf({ headers: many })).toBe('REQUEST_OPTIONS_TOO_LARGE');
    expect(codeOf({ headers: { 'x-a': 'v'.repeat(5000), 'x-b': 'v'.repeat(5000) } })).toBe('REQUEST_OPTIONS_TOO_LARGE');
    expect(codeOf({ user_agent: 'B'.repeat(600) })).toBe('REQUEST_OPTIONS_TOO_LARGE');
    expect(codeOf({ cookies: { 'shop.example': Array.from({ length: 65 }, (_, i) => `c${i}=1`) } })).toBe('REQUEST_OPTIONS_TOO_LARGE');
    expect(codeOf({ cookies: { 'shop.example': [`big=${'x'.repeat(5000)}`] } })).toBe('REQUEST_OPTIONS_TOO_LARGE');
  });

  it('wants a BCP 47 tag as locale', () => {
    for (const ok of ['en', 'fr-CH', 'zh-Hant-TW', 'de-CH-1996']) expect(codeOf({ locale: ok }), ok).toBeNull();
    for (const bad of ['fr_CH', 'en-US,fr', 'english!', 'x', '', 'en-US;q=0.9']) expect(codeOf({ locale: bad }), bad).toBe('INVALID_LOCALE');
  });

  it('refuses a cookie that does not parse, and says so without its value', () => {
    for (const bad of ['no-equals-sign', '=only-value', 'sid=SECRET\r\nSet-Cookie: x=1']) {
      const p = checkRequestOptions({ cookies: { 'shop.example': [bad] } }, HOSTS);
      expect(p, bad).toMatchObject({ code: 'INVALID_COOKIE', field: 'cookies.shop.example.0' });
      expect(p!.message).not.toContain('SECRET');
    }
    expect(codeOf({ cookies: { 'shop.example': ['__Host-sid=1; Path=/x'] } })).toBe('INVALID_COOKIE');
    expect(codeOf({ cookies: { 'https://shop.example': ['a=1'] } })).toBe('INVALID_COOKIE');
  });

  it("refuses a cookie whose domain is none of the crawl's hosts", () => {
    expect(checkRequestOptions({ cookies: { 'other.example': ['a=1'] } }, HOSTS)).toMatchObject({ code: 'COOKIE_DOMAIN_NOT_CRAWLED', field: 'cookies.other.example' });
    expect(codeOf({ cookies: { 'shop.example': ['a=1; Domain=other.example'] } })).toBe('INVALID_COOKIE');
    expect(codeOf({ cookies: { com: ['a=1'] } }, ['shop.com'])).toBe('COOKIE_DOMAIN_NOT_CRAWLED');
    // A parent of a crawled host is the site's: cookies for example.com reach shop.example.com.
    expect(codeOf({ cookies: { 'example.com': ['a=1'] } }, ['shop.example.com'])).toBeNull();
    expect(codeOf({ cookies: { 'other.example': ['a=1'] } }, null)).toBeNull();
  });

  it('reads allowed_hosts wildcards as their domain', () => {
    expect(domainCovers('api.shop.example', '*.shop.example')).toBe(true);
    expect(domainCovers('shop.example', '.shop.example')).toBe(true);
    expect(domainCovers('www.shop.example', 'shop.example')).toBe(true);
    expect(domainCovers('evil.example', '*.shop.example')).toBe(false);
  });
});
