import { describe, expect, it } from 'vitest';
import { HEAD_BYTES, pageMetadata } from './page-metadata.ts';

describe('pageMetadata', () => {
  it('reads title, description, language, canonical and OpenGraph/Twitter properties', () => {
    const html = `<!doctype html><html lang="fr-CH"><head><title> Caf&eacute; &amp; Co </title>
      <meta name="Description" content="Tables &amp; chairs">
      <link rel="canonical" href="https://a.example/c">
      <meta property="og:title" content='OG title'><meta name=twitter:card content=summary>
      </head><body><meta name="description" content="later"></body></html>`;
    expect(pageMetadata(html)).toEqual({
      title: 'Caf&eacute; & Co',
      description: 'Tables & chairs',
      language: 'fr-CH',
      canonical: 'https://a.example/c',
      social: { 'og:title': 'OG title', 'twitter:card': 'summary' },
    });
  });

  it('gives nulls for a page without a head, and looks no further than its bound', () => {
    expect(pageMetadata('plain text')).toEqual({ title: null, description: null, language: null, canonical: null, social: {} });
    expect(pageMetadata(`${' '.repeat(HEAD_BYTES)}<title>late</title>`).title).toBeNull();
  });

  it('stays linear on hostile input', () => {
    const hostile = '<meta ' + 'a='.repeat(30_000);
    const started = performance.now();
    pageMetadata(hostile);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
