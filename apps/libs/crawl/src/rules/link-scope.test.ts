import { describe, expect, it } from 'vitest';
import { compileRules, scopeOf } from './crawl-rules.ts';
import { testSpec } from './test-spec.ts';

const page = 'http://shop.example.co.uk/list';

describe('CrawlRules: scope', () => {
  it('reads a null scope from same_host, as before the field existed', () => {
    expect(scopeOf({ scope: null, same_host: true })).toBe('same_host');
    expect(scopeOf({ scope: null, same_host: false })).toBe('any');
    expect(scopeOf({ scope: 'same_domain', same_host: true })).toBe('same_domain');
    expect(scopeOf({ scope: 'same_host', same_host: false })).toBe('same_host');
  });

  it('same_host: the page host alone (www. aside), not its subdomains nor its registrable domain', () => {
    const rules = compileRules(testSpec({ scope: 'same_host' }));
    expect(rules.check('http://www.shop.example.co.uk/a', page)).toBeNull();
    expect(rules.check('http://blog.shop.example.co.uk/a', page)).toBe('off_host');
    expect(rules.check('http://blog.example.co.uk/a', page)).toBe('off_host');
  });

  it('same_domain: every host of the registrable domain, by the Public Suffix List, whatever the port', () => {
    const rules = compileRules(testSpec({ scope: 'same_domain', same_host: true }));
    expect(rules.check('http://blog.example.co.uk/a', page)).toBeNull();
    expect(rules.check('http://example.co.uk:8080/a', page)).toBeNull();
    expect(rules.check('http://a.b.shop.example.co.uk/a', page)).toBeNull();
    // co.uk is a public suffix: another.co.uk is another registrable domain.
    expect(rules.check('http://another.co.uk/a', page)).toBe('off_host');
    expect(rules.check('http://example.com/a', page)).toBe('off_host');
    // Private suffixes of the list (github.io) separate their tenants too.
    expect(rules.check('https://bob.github.io/', 'https://alice.github.io/')).toBe('off_host');
    // A name under .localhost (what the hard site uses) has its registrable domain under it.
    expect(rules.check('http://blog.site.localhost:8090/', 'http://site.localhost:8090/')).toBeNull();
    expect(rules.check('http://other.localhost:8090/', 'http://site.localhost:8090/')).toBe('off_host');
  });

  it('same_domain: an IP address is its own domain; allowed_hosts still add hosts', () => {
    const rules = compileRules(testSpec({ scope: 'same_domain', allowed_hosts: ['cdn.example.net'] }));
    expect(rules.check('http://127.0.0.1:9/a', 'http://127.0.0.1:8/')).toBeNull();
    expect(rules.check('http://127.0.0.2:8/a', 'http://127.0.0.1:8/')).toBe('off_host');
    expect(rules.check('http://[::1]:9/a', 'http://[::1]:8/')).toBeNull();
    expect(rules.check('http://cdn.example.net/x', page)).toBeNull();
  });

  it('any: every host, same_host notwithstanding', () => {
    const rules = compileRules(testSpec({ scope: 'any', same_host: true }));
    expect(rules.check('http://elsewhere.example/', page)).toBeNull();
    expect(rules.isHostAllowed('elsewhere.example', 'shop.example.co.uk')).toBe(true);
  });
});
