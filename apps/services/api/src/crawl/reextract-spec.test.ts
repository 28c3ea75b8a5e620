import { describe, expect, it } from 'vitest';
import type { ItemField } from '@trawl/schemas';
import { crawlSpec } from '@trawl/store';
import { reextractionSpec, reextractKey } from './reextract-spec.ts';

const SOURCE = '0c5e1f7a-2b3d-5e4f-8a9b-1c2d3e4f5a6b';
const field = (name: string, selector: string): ItemField => ({ name, selector, attribute: null, xpath: null, transforms: [] });
const source = {
  ...crawlSpec(null, { depth: 2, max_pages: 500 }),
  item_root: 'li.item',
  item_fields: [field('t', '.x')],
  formats: ['markdown', 'screenshot'],
  pagination_type: 'load_more' as const,
  load_more_selector: 'button.more',
  requires_browser: true,
  headers: { authorization: 'tsec1.sealed' },
  cookies: { 'site.test': ['a=b'] },
  sessions: 2,
  actions: [{ type: 'click' as const, selector: 'a', text: null, key: null, ms: null, times: null, full_page: false }],
  store_in_cache: true,
  max_age: 3600,
};

describe('reextractionSpec', () => {
  it("replaces the rules given, keeps the others and the source's limits, and names the source", () => {
    const spec = reextractionSpec(source, SOURCE, { item_fields: [field('t', '.t')] }, 40);
    expect(spec).toMatchObject({ reextract_of: SOURCE, item_root: 'li.item', item_fields: [field('t', '.t')], max_pages: 40, max_depth: 2 });
    expect(reextractionSpec(source, SOURCE, { item_root: null }, 40).item_root).toBeNull();
  });

  it('takes an XPath item root in place of the CSS one (and back), and an item schema as the JSON text specs carry', () => {
    const xpath = reextractionSpec(source, SOURCE, { item_root_xpath: '//li[@class="item"]' }, 40);
    expect({ css: xpath.item_root, xpath: xpath.item_root_xpath }).toEqual({ css: null, xpath: '//li[@class="item"]' });
    const back = reextractionSpec(xpath, SOURCE, { item_root: 'li' }, 40);
    expect({ css: back.item_root, xpath: back.item_root_xpath }).toEqual({ css: 'li', xpath: null });
    // Both given: kept both, for the website check to refuse (check-selectors.ts).
    expect(reextractionSpec(source, SOURCE, { item_root: 'li', item_root_xpath: '//li' }, 40)).toMatchObject({ item_root: 'li', item_root_xpath: '//li' });
    const schema = { type: 'object', required: ['t'] };
    expect(reextractionSpec(source, SOURCE, { item_schema: schema }, 40).item_schema).toBe(JSON.stringify(schema));
    const kept = { ...source, item_schema: '{"type":"object"}' };
    expect(reextractionSpec(kept, SOURCE, {}, 40).item_schema).toBe('{"type":"object"}');
    expect(reextractionSpec(kept, SOURCE, { item_schema: null }, 40).item_schema).toBeNull();
  });

  it('makes the metadata format again from a stored body', () => {
    expect(reextractionSpec(source, SOURCE, { formats: ['metadata', 'markdown'] }, 40).formats).toEqual(['metadata', 'markdown']);
  });

  it('drops what would go to the network: request and reach options, the browser, sitemaps, the cache, browser formats', () => {
    const spec = reextractionSpec(source, SOURCE, {}, 40);
    expect(spec).toMatchObject({
      requires_browser: false, pagination_type: 'none', load_more_selector: null, headers: {}, cookies: {}, sessions: 0, actions: [], login: null, proxies: [],
      sitemap: 'skip', max_age: null, store_in_cache: false, downloads: null, formats: ['markdown'],
    });
  });
});

describe('reextractKey', () => {
  it('is the same for the same rules in any key order, and differs for other rules', () => {
    expect(reextractKey({ item_root: 'a', formats: ['text'] })).toBe(reextractKey({ formats: ['text'], item_root: 'a' }));
    expect(reextractKey({ item_root: 'a' })).not.toBe(reextractKey({ item_root: 'b' }));
  });
});
