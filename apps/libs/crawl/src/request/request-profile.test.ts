import { describe, expect, it } from 'vitest';
import { acceptLanguageOf } from '@trawl/schemas';
import { requestProfileOf } from './request-profile.ts';
import { productTokenOf, userAgentFromEnv } from './user-agent.ts';
import { testSpec } from '../rules/test-spec.ts';

describe('a request profile', () => {
  it('sends cookies only to the URLs they match (domain, path, Secure)', () => {
    const p = requestProfileOf(testSpec({ cookies: { 'shop.example': ['a=1', 'b=2; Path=/account', 's=3; Secure', 'd=4; Domain=shop.example'] } }))!;
    expect(p.headersFor('https://shop.example/', 'https://shop.example/').cookie).toBe('a=1; s=3; d=4');
    expect(p.headersFor('http://shop.example/account/x', 'http://shop.example/').cookie).toBe('b=2; a=1; d=4');
    expect(p.headersFor('https://www.shop.example/', 'https://shop.example/').cookie).toBe('d=4');
    expect(p.headersFor('https://elsewhere.example/', 'https://shop.example/').cookie).toBeUndefined();
  });

  it("keeps the user's headers on the origin the fetch started at", () => {
    const p = requestProfileOf(testSpec({ headers: { authorization: 'Bearer t', 'x-a': '1' } }))!;
    expect(p.headersFor('https://a.test/x', 'https://a.test/')).toEqual({ authorization: 'Bearer t', 'x-a': '1' });
    expect(p.headersFor('https://b.test/x', 'https://a.test/')).toEqual({});
  });

  it('turns the locale into Accept-Language and carries the user agent', () => {
    const p = requestProfileOf(testSpec({ locale: 'fr-CH', user_agent: 'Bot/1' }))!;
    expect(p.headersFor('https://a.test/', 'https://a.test/')).toEqual({ 'accept-language': 'fr-CH,fr;q=0.9', 'user-agent': 'Bot/1' });
    expect(acceptLanguageOf('en')).toBe('en');
  });

  it('is null for a spec without options, also one written before they existed', () => {
    expect(requestProfileOf(testSpec())).toBeNull();
    const { headers: _h, cookies: _c, user_agent: _u, locale: _l, ...old } = testSpec();
    expect(requestProfileOf(old as Parameters<typeof requestProfileOf>[0])).toBeNull();
  });
});

describe("the operator's user agent", () => {
  it('is honest by default: Trawl, its version and a contact URL', () => {
    expect(userAgentFromEnv({}).userAgent).toMatch(/^Trawl\/\d+\.\d+\.\d+ \(\+https:\/\/github\.com\/trawl\)$/);
    expect(userAgentFromEnv({ TRAWL_CONTACT_URL: 'https://ops.example/crawler' })).toEqual({ userAgent: expect.stringMatching(/^Trawl\/[\d.]+ \(\+https:\/\/ops\.example\/crawler\)$/), productToken: 'Trawl' });
  });

  it('can be replaced whole, and its product token is what robots.txt is matched against', () => {
    expect(userAgentFromEnv({ TRAWL_USER_AGENT: 'AcmeCrawler/3.1 (+mailto:ops@acme.example)' }).productToken).toBe('AcmeCrawler');
    expect(productTokenOf('Trawl/0.1.0 (+x)')).toBe('Trawl');
  });

  it('refuses a setting it cannot send', () => {
    expect(() => userAgentFromEnv({ TRAWL_USER_AGENT: 'Bad\r\nX-Injected: 1' })).toThrow(/TRAWL_USER_AGENT/);
    expect(() => userAgentFromEnv({ TRAWL_USER_AGENT: '(no token)' })).toThrow(/product token/);
    expect(() => userAgentFromEnv({ TRAWL_CONTACT_URL: 'ops team' })).toThrow(/TRAWL_CONTACT_URL/);
  });
});
