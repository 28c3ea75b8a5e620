import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { checkFormats, mapLinks } from './scrape-service.ts';

describe('checkFormats', () => {
  it('keeps known formats once, in order', () => {
    expect(checkFormats(['markdown', 'links', 'markdown', 'screenshot'])).toEqual(['markdown', 'links', 'screenshot']);
  });

  it('refuses an unknown format with UNSUPPORTED_FORMAT naming it', () => {
    try {
      checkFormats(['html', 'rawHtml']);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: 'UNSUPPORTED_FORMAT', field: 'formats.1' });
    }
  });
});

describe('mapLinks', () => {
  const found = [
    'https://a.example/',
    'https://a.example/docs#top',
    'https://www.a.example/docs',
    'https://blog.a.example/post',
    'https://b.example/',
    'mailto:x@a.example',
    'not a url',
    'https://a.example/docs',
    'https://a.example/Pricing',
  ];

  it("keeps the site's host and www., without fragments, each once, in order", () => {
    expect(mapLinks(found, { root: 'https://a.example/', limit: 100, subdomains: false })).toEqual(['https://a.example/', 'https://a.example/docs', 'https://www.a.example/docs', 'https://a.example/Pricing']);
  });

  it('adds subdomains when asked, filters by search case-insensitively, and stops at the limit', () => {
    expect(mapLinks(found, { root: 'https://www.a.example/', limit: 100, subdomains: true })).toContain('https://blog.a.example/post');
    expect(mapLinks(found, { root: 'https://a.example/', search: 'PRIC', limit: 100, subdomains: false })).toEqual(['https://a.example/Pricing']);
    expect(mapLinks(found, { root: 'https://a.example/', limit: 2, subdomains: false })).toHaveLength(2);
  });
});
