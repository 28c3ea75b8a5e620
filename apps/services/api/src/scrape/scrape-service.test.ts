import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { answerMetadata, checkFormats, mapLinks } from './scrape-service.ts';

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

describe('answerMetadata', () => {
  it("answers the worker's stored structured data, with `social` as the OpenGraph and Twitter properties' first values", () => {
    const stored = JSON.stringify({ title: 'Kettle', description: null, language: 'en', canonical: null, open_graph: { 'og:image': ['a.jpg', 'b.jpg'] }, twitter: { 'twitter:card': 'summary' }, json_ld: [{ '@type': 'Product' }], json_ld_invalid: 0, microdata: [] });
    expect(answerMetadata(stored, '<title>ignored</title>')).toMatchObject({ title: 'Kettle', language: 'en', social: { 'og:image': 'a.jpg', 'twitter:card': 'summary' }, json_ld: [{ '@type': 'Product' }] });
  });

  it('reads the stored HTML\'s head when no structured data was stored, and gives nulls without either', () => {
    expect(answerMetadata(null, '<html lang="de"><title>Kessel</title><meta property="og:title" content="K">')).toEqual({ title: 'Kessel', description: null, language: 'de', canonical: null, social: { 'og:title': 'K' } });
    expect(answerMetadata('not json', null)).toEqual({ title: null, description: null, language: null, canonical: null, social: {} });
  });
});
