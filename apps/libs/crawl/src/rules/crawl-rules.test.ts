import { describe, expect, it } from 'vitest';
import { InvalidSpecError } from '../errors.ts';
import { compileRules, hostOf } from './crawl-rules.ts';
import { isNonFetchableHref } from './href-filter.ts';
import { detectTrap } from './trap-guards.ts';
import { testSpec } from './test-spec.ts';

const page = 'http://shop.example/list';

describe('CrawlRules', () => {
  it('keeps same-host links and drops off-host ones', () => {
    const rules = compileRules(testSpec());
    expect(rules.check('http://shop.example/a', page)).toBeNull();
    expect(rules.check('http://www.shop.example/a', page)).toBeNull();
    expect(rules.check('http://evil.example/a', page)).toBe('off_host');
    expect(rules.check('http://shop.example:8080/a', page)).toBe('off_host');
  });

  it('opens allowed hosts, exact or by subdomain wildcard', () => {
    const rules = compileRules(testSpec({ allowed_hosts: ['cdn.example', '*.partner.example'] }));
    expect(rules.check('http://cdn.example/a', page)).toBeNull();
    expect(rules.check('http://a.partner.example/a', page)).toBeNull();
    expect(rules.check('http://partner.example/a', page)).toBeNull();
    expect(rules.check('http://xpartner.example/a', page)).toBe('off_host');
  });

  it('follows any host when same_host is off', () => {
    expect(compileRules(testSpec({ same_host: false })).check('http://other.example/', page)).toBeNull();
  });

  it('applies include then exclude patterns', () => {
    const rules = compileRules(testSpec({ include_patterns: ['/jobs'], exclude_patterns: ['\\.pdf$'] }));
    expect(rules.check('http://shop.example/jobs/1', page)).toBeNull();
    expect(rules.check('http://shop.example/about', page)).toBe('not_included');
    expect(rules.check('http://shop.example/jobs/1.pdf', page)).toBe('excluded');
  });

  it('rejects an invalid regex once, at compile time, naming the field', () => {
    expect(() => compileRules(testSpec({ exclude_patterns: ['ok', '(unclosed'] }))).toThrow(InvalidSpecError);
    expect(() => compileRules(testSpec({ exclude_patterns: ['ok', '(unclosed'] }))).toThrow(/exclude_patterns\[1\]/);
  });

  it('refuses trap URLs before looking at the host', () => {
    const rules = compileRules(testSpec());
    expect(rules.check(`http://shop.example/${'x'.repeat(2100)}`, page)).toBe('url_too_long');
    expect(rules.check('http://shop.example/a/b/a/b/a/b', page)).toBe('repeated_segments');
  });
});

describe('detectTrap', () => {
  it.each([
    ['http://e.com/a/b/c', null],
    ['http://e.com/', null],
    ['http://e.com/calendar/2026/01', null],
    ['http://e.com/a/a', null],
    ['http://e.com/a/x/a/y/a', 'repeated_segments'],
    ['http://e.com/a/b/a/b', 'repeated_segments'],
    ['http://e.com/x/a/b/c/a/b/c/y', 'repeated_segments'],
    ['http://e.com/a/b/a/b/a/b', 'repeated_segments'],
    [`http://e.com/${Array.from({ length: 21 }, (_, i) => `s${i}`).join('/')}`, 'path_too_deep'],
    ['http://e.com/a?x=/a/a/a/a', null],
  ])('%s → %s', (url, verdict) => {
    expect(detectTrap(url)).toBe(verdict);
  });

  it('honours custom limits', () => {
    expect(detectTrap('http://e.com/abcdef', { maxUrlLength: 10, maxPathSegments: 20, maxSameSegment: 3 })).toBe('url_too_long');
  });
});

describe('isNonFetchableHref', () => {
  it.each(['mailto:a@b.c', ' javascript:void(0)', 'tel:+331', 'data:text/html,x', 'JavaScript:x', '#top', ''])('skips %j', (href) => {
    expect(isNonFetchableHref(href)).toBe(true);
  });
  it.each(['/a', 'http://e.com/', 'page?x=1', 'mailto.html'])('keeps %j', (href) => {
    expect(isNonFetchableHref(href)).toBe(false);
  });
});

describe('hostOf', () => {
  it('reads the host and port of a URL string', () => {
    expect(hostOf('http://e.com:81/a?b')).toBe('e.com:81');
    expect(hostOf('https://e.com?q')).toBe('e.com');
    expect(hostOf('https://E.com')).toBe('e.com');
  });
});
