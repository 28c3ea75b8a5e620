import { describe, expect, it } from 'vitest';
import { crawlOptionsBody, CrawlOptionsError, type CrawlOptionsForm } from './crawl-options.ts';

const empty: CrawlOptionsForm = { headers: '', userAgent: '', proxies: '', loginUrl: '', loginSecrets: '', actions: '', include: '', exclude: '', scope: '', followNofollow: false };

describe('the new-crawl form: reach options and link rules', () => {
  it('sets nothing for an untouched form', () => {
    expect(crawlOptionsBody(empty)).toEqual({});
  });

  it('maps each field to the body, a login by secret names with one session', () => {
    expect(
      crawlOptionsBody({
        headers: 'X-Api-Key: k-123\n\nReferer: https://shop.example/\n',
        userAgent: ' ShopMonitor/1.0 ',
        proxies: 'http://proxy-a.example:3128\nsocks5://proxy-b.example:1080',
        loginUrl: 'https://shop.example/login',
        loginSecrets: 'user=shop-user\npassword=shop-password',
        actions: '[{"type": "click", "selector": "#accept"}]',
        include: '/products/\n/category/',
        exclude: '[?&]sort=',
        scope: 'same_domain',
        followNofollow: true,
      }),
    ).toEqual({
      headers: { 'X-Api-Key': 'k-123', Referer: 'https://shop.example/' },
      user_agent: 'ShopMonitor/1.0',
      proxies: ['http://proxy-a.example:3128', 'socks5://proxy-b.example:1080'],
      login: { kind: 'form', url: 'https://shop.example/login', fields: { user: { secret: 'shop-user' }, password: { secret: 'shop-password' } } },
      sessions: 1,
      actions: [{ type: 'click', selector: '#accept' }],
      include_patterns: ['/products/', '/category/'],
      exclude_patterns: ['[?&]sort='],
      scope: 'same_domain',
      follow_nofollow: true,
    });
  });

  it('says which field is malformed', () => {
    expect(() => crawlOptionsBody({ ...empty, headers: 'no colon' })).toThrow(/Headers/);
    expect(() => crawlOptionsBody({ ...empty, loginSecrets: 'password=pw' })).toThrow(/login page/);
    expect(() => crawlOptionsBody({ ...empty, actions: '{"type": "click"}' })).toThrow(CrawlOptionsError);
    expect(() => crawlOptionsBody({ ...empty, actions: '[oops' })).toThrow(/Actions: not JSON/);
  });
});
