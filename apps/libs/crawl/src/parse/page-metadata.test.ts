import { describe, expect, it } from 'vitest';
import { loadHtml } from './load-html.ts';
import { DEFAULT_METADATA_LIMITS, extractMetadata } from './page-metadata.ts';
import { parsePage } from './parse-page.ts';
import { testSpec } from '../rules/test-spec.ts';

const BASE = new URL('https://shop.example/p/kettle?ref=home');

const PAGE = `<!doctype html><html lang="en-GB"><head>
  <title> Steel kettle &amp; stand </title>
  <meta name="description" content="A kettle that whistles.">
  <link rel="canonical" href="/p/kettle">
  <meta property="og:title" content="Steel kettle">
  <meta property="og:image" content="https://shop.example/k1.jpg">
  <meta property="og:image" content="https://shop.example/k2.jpg">
  <meta property="product:price:amount" content="24.50">
  <meta name="twitter:card" content="summary_large_image">
  <script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Steel kettle","offers":{"@type":"Offer","price":"24.50"}}</script>
  <script type="application/ld+json">{"@type": "Broken", </script>
  <script type="application/ld+json"><!-- [{"@type":"BreadcrumbList"}] --></script>
  <svg><title>icon</title></svg>
</head><body>
  <div itemscope itemtype="https://schema.org/Product" itemid="urn:sku:42">
    <h1 itemprop="name">Steel kettle</h1>
    <img itemprop="image" src="/k1.jpg">
    <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
      <meta itemprop="priceCurrency" content="GBP"><span itemprop="price">24.50</span>
      <time itemprop="validFrom" datetime="2026-12-01">December</time>
    </div>
    <span itemprop="color material">steel</span>
  </div>
  <p itemscope itemtype="https://schema.org/Person"><span itemprop="name">Ada</span></p>
</body></html>`;

describe('extractMetadata', () => {
  it('reads title, description, language, canonical, OpenGraph and Twitter properties, JSON-LD and microdata', () => {
    const meta = extractMetadata(loadHtml(PAGE), BASE);
    expect(meta).toMatchObject({
      title: 'Steel kettle & stand',
      description: 'A kettle that whistles.',
      language: 'en-GB',
      canonical: 'https://shop.example/p/kettle',
      open_graph: { 'og:title': 'Steel kettle', 'og:image': ['https://shop.example/k1.jpg', 'https://shop.example/k2.jpg'], 'product:price:amount': '24.50' },
      twitter: { 'twitter:card': 'summary_large_image' },
      json_ld_invalid: 1,
      cut: { properties: 0, json_ld: 0, microdata: 0 },
    });
    expect(meta.json_ld).toEqual([
      { '@context': 'https://schema.org', '@type': 'Product', name: 'Steel kettle', offers: { '@type': 'Offer', price: '24.50' } },
      [{ '@type': 'BreadcrumbList' }],
    ]);
    expect(meta.microdata).toEqual([
      {
        type: ['https://schema.org/Product'],
        id: 'urn:sku:42',
        properties: {
          name: ['Steel kettle'],
          image: ['https://shop.example/k1.jpg'],
          offers: [{ type: ['https://schema.org/Offer'], properties: { priceCurrency: ['GBP'], price: ['24.50'], validFrom: ['2026-12-01'] } }],
          color: ['steel'],
          material: ['steel'],
        },
      },
      { type: ['https://schema.org/Person'], properties: { name: ['Ada'] } },
    ]);
  });

  it('gives empty metadata for a page without any', () => {
    expect(extractMetadata(loadHtml('<p>plain</p>'), BASE)).toEqual({
      title: null, description: null, language: null, canonical: null, open_graph: {}, twitter: {}, json_ld: [], json_ld_invalid: 0, microdata: [], cut: { properties: 0, json_ld: 0, microdata: 0 },
    });
  });

  it('takes the language from content-language when <html> has none', () => {
    expect(extractMetadata(loadHtml('<meta http-equiv="Content-Language" content="de, en">'), BASE).language).toBe('de');
  });

  it('keeps within its limits and counts what it leaves out', () => {
    const props = Array.from({ length: 150 }, (_, i) => `<meta property="og:x${i}" content="${'v'.repeat(3000)}">`).join('');
    const blocks = Array.from({ length: 25 }, (_, i) => `<script type="application/ld+json">{"n":${i}}</script>`).join('');
    const huge = `<script type="application/ld+json">{"big":"${'x'.repeat(200_000)}"}</script>`;
    const items = Array.from({ length: 300 }, (_, i) => `<div itemscope><span itemprop="n">${i}</span></div>`).join('');
    const meta = extractMetadata(loadHtml(`<html><head>${props}${huge}${blocks}</head><body>${items}</body></html>`), BASE);
    expect(Object.keys(meta.open_graph)).toHaveLength(DEFAULT_METADATA_LIMITS.maxProperties);
    expect((meta.open_graph['og:x0'] as string).length).toBe(DEFAULT_METADATA_LIMITS.maxValueChars);
    expect(meta.cut.properties).toBe(50);
    // The huge block is not parsed; 20 small ones are, 5 past the count are not.
    expect(meta.json_ld).toHaveLength(20);
    expect(meta.cut.json_ld).toBe(6);
    expect(meta.microdata.length + meta.cut.microdata).toBe(300);
    expect(meta.microdata).toHaveLength(DEFAULT_METADATA_LIMITS.maxMicrodataItems);
    expect(Buffer.byteLength(JSON.stringify(meta))).toBeLessThanOrEqual(DEFAULT_METADATA_LIMITS.maxBytes);
  });

  it('fits the whole object in maxBytes, leaving out microdata, then JSON-LD, from the end', () => {
    const items = Array.from({ length: 50 }, (_, i) => `<div itemscope><span itemprop="n">${i}${'y'.repeat(1000)}</span></div>`).join('');
    const meta = extractMetadata(loadHtml(`<body>${items}</body>`), BASE, { ...DEFAULT_METADATA_LIMITS, maxBytes: 10_000 });
    expect(Buffer.byteLength(JSON.stringify(meta))).toBeLessThanOrEqual(10_000);
    expect(meta.microdata.length).toBeGreaterThan(0);
    expect(meta.microdata.length + meta.cut.microdata).toBe(50);
  });

  it('does not follow nesting past its depth: a deep item tree reads as text', () => {
    const deep = '<div itemscope itemprop="a">'.repeat(30) + 'core' + '</div>'.repeat(30);
    const meta = extractMetadata(loadHtml(`<div itemscope>${deep}</div>`), BASE);
    let node = meta.microdata[0]!;
    let depth = 0;
    while (typeof node.properties.a?.[0] === 'object') {
      node = node.properties.a[0];
      depth++;
    }
    expect(depth).toBeLessThan(10);
    expect(node.properties.a?.[0]).toBe('core');
  });
});

describe('parsePage: structured data and the main-text hash', () => {
  const input = { html: PAGE, url: BASE.href, finalUrl: BASE.href };
  it('reads the metadata when the job keeps the `metadata` format, and hashes the main text always', () => {
    const kept = parsePage({ ...input, spec: testSpec({ formats: ['metadata'] }) });
    expect(kept.metadata).toMatchObject({ title: 'Steel kettle & stand', json_ld_invalid: 1 });
    expect(kept.simhash).toMatch(/^[0-9a-f]{16}$/);
    const plain = parsePage({ ...input, spec: testSpec({ formats: [] }) });
    expect(plain.metadata).toBeNull();
    expect(plain.simhash).toBe(kept.simhash);
  });

  it('has no hash for a page without text', () => {
    expect(parsePage({ html: '<html><head><title>t</title></head><body><script>x()</script></body></html>', url: BASE.href, finalUrl: BASE.href, spec: testSpec({}) }).simhash).toBeNull();
  });
});
