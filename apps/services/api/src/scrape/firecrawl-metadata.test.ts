import { describe, expect, it } from 'vitest';
import { firecrawlMetadata } from './firecrawl-metadata.ts';

const PAGE = { sourceURL: 'https://a.example/x?ref=1', url: 'https://a.example/x', statusCode: 200, contentType: 'text/html', scrapeId: 'job-1' };

describe('firecrawlMetadata', () => {
  it("gives stored metadata Firecrawl's DocumentMetadata shape", () => {
    const metadata = {
      title: 'Kettle', description: 'Boils', language: 'en', canonical: 'https://a.example/x',
      open_graph: { 'og:title': 'OG kettle', 'og:image': ['https://a.example/1.jpg', 'https://a.example/2.jpg'], 'og:site_name': 'A', 'og:locale:alternate': ['fr_FR', 'de_DE'], 'article:published_time': '2026-11-02' },
      twitter: { 'twitter:card': 'summary' },
      json_ld: [{ '@type': 'Product' }],
      json_ld_invalid: 1,
      microdata: [],
    };
    expect(firecrawlMetadata({ metadata, ...PAGE })).toEqual({
      title: 'Kettle', description: 'Boils', language: 'en',
      ogTitle: 'OG kettle', ogImage: 'https://a.example/1.jpg', ogSiteName: 'A', ogLocaleAlternate: ['fr_FR', 'de_DE'], publishedTime: '2026-11-02',
      'og:title': 'OG kettle', 'og:image': ['https://a.example/1.jpg', 'https://a.example/2.jpg'], 'og:site_name': 'A', 'og:locale:alternate': ['fr_FR', 'de_DE'], 'twitter:card': 'summary',
      jsonLd: [{ '@type': 'Product' }],
      ...PAGE,
    });
  });

  it('reads an answer made from the head scan (social) and leaves out what the page lacks', () => {
    expect(firecrawlMetadata({ metadata: { title: null, description: null, social: { 'og:url': 'https://a.example/x' } }, ...PAGE, contentType: null, error: 'gone' })).toEqual({
      ogUrl: 'https://a.example/x', 'og:url': 'https://a.example/x', sourceURL: PAGE.sourceURL, url: PAGE.url, statusCode: 200, scrapeId: 'job-1', error: 'gone',
    });
  });
});
