import { describe, expect, it } from 'vitest';
import { InvalidUrlError } from '../errors.ts';
import { fetchId, normaliseUrl, normaliseUrlOrNull } from './normalise.ts';

describe('normaliseUrl', () => {
  it.each([
    ['HTTP://Example.COM/a', 'http://example.com/a'],
    ['http://example.com:80/a', 'http://example.com/a'],
    ['https://example.com:443/a', 'https://example.com/a'],
    ['https://example.com:8443/a', 'https://example.com:8443/a'],
    ['http://example.com', 'http://example.com/'],
    ['http://example.com/a#frag', 'http://example.com/a'],
    ['http://example.com/a?utm_source=x&b=2&UTM_Medium=y&a=1', 'http://example.com/a?a=1&b=2'],
    ['http://example.com/a?fbclid=1&gclid=2', 'http://example.com/a'],
    ['http://example.com/a?', 'http://example.com/a'],
    ['http://example.com/a?b=1&&a=2', 'http://example.com/a?a=2&b=1'],
    ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
    ['http://example.com/%7euser/%2fx%2Fy', 'http://example.com/~user/%2Fx%2Fy'],
    ['http://example.com/?q=%61%62%2b', 'http://example.com/?q=ab%2B'],
    ['http://user:pw@example.com/', 'http://example.com/'],
    ['http://bücher.example/', 'http://xn--bcher-kva.example/'],
    ['http://2130706433/', 'http://127.0.0.1/'],
    ['http://0x7f.1/', 'http://127.0.0.1/'],
    ['http://017700000001/', 'http://127.0.0.1/'],
    ['  http://example.com/a  ', 'http://example.com/a'],
  ])('%s → %s', (input, expected) => {
    expect(normaliseUrl(input)).toBe(expected);
  });

  it('keeps the order of repeated keys (stable sort by key)', () => {
    expect(normaliseUrl('http://e.com/?b=1&a=2&a=1')).toBe('http://e.com/?a=2&a=1&b=1');
  });

  it('is idempotent', () => {
    const once = normaliseUrl('HTTP://E.com:80/x/../y?z=1&utm_a=2&a=%7e#f');
    expect(normaliseUrl(once)).toBe(once);
  });

  it('resolves relative links against a base', () => {
    expect(normaliseUrl('../c?b=1#x', 'http://e.com/a/b/')).toBe('http://e.com/a/c?b=1');
    expect(normaliseUrl('//other.com/x', 'https://e.com/')).toBe('https://other.com/x');
  });

  it.each(['mailto:a@b.c', 'javascript:alert(1)', 'ftp://e.com/', 'data:text/html,hi', 'file:///etc/passwd'])('refuses %s', (input) => {
    expect(normaliseUrlOrNull(input)).toBeNull();
    expect(() => normaliseUrl(input)).toThrow(/unsupported scheme/);
  });

  it('refuses what is not a URL', () => {
    expect(normaliseUrlOrNull('not a url')).toBeNull();
    expect(() => normaliseUrl('not a url')).toThrow(InvalidUrlError);
  });
});

describe('fetchId', () => {
  it('is the same for the same job and URL, different otherwise', () => {
    const job = '6f1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11';
    expect(fetchId(job, 'http://e.com/')).toBe(fetchId(job, 'http://e.com/'));
    expect(fetchId(job, 'http://e.com/')).not.toBe(fetchId(job, 'http://e.com/a'));
    expect(fetchId(job, 'http://e.com/')).not.toBe(fetchId('other', 'http://e.com/'));
  });
});
