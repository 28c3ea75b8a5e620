import { describe, expect, it } from 'vitest';
import { canonicalStartUrls, dedupeKey } from './dedupe-key.ts';

const base = { spider: null, start_urls: ['http://a.test/x', 'http://b.test/'], depth: 1, params: { q: 'shoes', page: '1' } };

describe('dedupe key', () => {
  it('ignores the order and duplicates of start URLs and the order of params', () => {
    expect(dedupeKey({ ...base, start_urls: ['http://b.test/', 'http://a.test/x', 'http://b.test/'], params: { page: '1', q: 'shoes' } })).toBe(dedupeKey(base));
  });

  it('compares URLs as parsed: scheme and host case, default port and fragment do not matter', () => {
    expect(dedupeKey({ ...base, start_urls: ['HTTP://A.test:80/x#top', 'http://b.test'] })).toBe(dedupeKey(base));
  });

  it('differs by spider, depth, params or URL path', () => {
    const key = dedupeKey(base);
    expect(dedupeKey({ ...base, spider: 'books' })).not.toBe(key);
    expect(dedupeKey({ ...base, depth: 2 })).not.toBe(key);
    expect(dedupeKey({ ...base, params: { q: 'boots', page: '1' } })).not.toBe(key);
    expect(dedupeKey({ ...base, start_urls: ['http://a.test/X', 'http://b.test/'] })).not.toBe(key);
  });

  it('differs by a sitemap mode other than the default, and is unchanged by the default', () => {
    const key = dedupeKey(base);
    expect(dedupeKey({ ...base, sitemap: 'include' })).toBe(key);
    expect(dedupeKey({ ...base, sitemap: 'only' })).not.toBe(key);
    expect(dedupeKey({ ...base, sitemap: 'skip' })).not.toBe(dedupeKey({ ...base, sitemap: 'only' }));
  });

  it('sorts canonical start URLs', () => {
    expect(canonicalStartUrls(['http://b.test', 'http://a.test/'])).toEqual(['http://a.test/', 'http://b.test/']);
  });
});
