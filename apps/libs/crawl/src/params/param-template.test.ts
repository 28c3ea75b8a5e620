import { describe, expect, it } from 'vitest';
import { sampleSpec } from '@trawl/schemas';
import { MissingParamError } from '../errors.ts';
import { parsePage } from '../parse/parse-page.ts';
import { cssEscape, renderSelector, renderUrl, specParamNames, specWithParams, templateNames } from './param-template.ts';

describe('param templates', () => {
  it('fills a URL template, each value one percent-encoded component', () => {
    expect(renderUrl('https://shop.test/search?q={{q}}&page={{ page }}', { q: 'red shoes&x=1#top', page: '2' })).toBe(
      'https://shop.test/search?q=red%20shoes%26x%3D1%23top&page=2',
    );
    expect(renderUrl('https://shop.test/c/{{cat}}', { cat: '../admin' })).toBe('https://shop.test/c/..%2Fadmin');
  });

  it('leaves text that is not a placeholder alone and lists the names used', () => {
    expect(renderUrl('https://a.test/{x}/{{ }}', {})).toBe('https://a.test/{x}/{{ }}');
    expect(templateNames('{{a}} {{b}} {{a}}')).toEqual(['a', 'b']);
  });

  it('refuses a placeholder without a value, naming it', () => {
    expect(() => renderUrl('https://a.test/?q={{q}}', {})).toThrow(MissingParamError);
    expect(() => renderUrl('https://a.test/?q={{q}}', {})).toThrow(/"q"/);
  });

  it('escapes selector values as CSS.escape does, so a value cannot break out of its place', () => {
    expect(cssEscape('a"] , script[x="')).toBe('a\\"\\]\\ \\,\\ script\\[x\\=\\"');
    expect(cssEscape('1st')).toBe('\\31 st');
    expect(cssEscape('-')).toBe('\\-');
    expect(cssEscape('caf\u00e9_x-1')).toBe('caf\u00e9_x-1');
    expect(renderSelector('li[data-cat="{{cat}}"] .name', { cat: 'toys" ], body' })).toBe('li[data-cat="toys\\"\\ \\]\\,\\ body"] .name');
  });

  it('extracts with a selector filled from the params, and only what the value names', () => {
    const spec = specWithParams(
      { ...sampleSpec, item_root: 'li[data-cat="{{cat}}"]', item_fields: [{ name: 'name', selector: '.name', attribute: null, xpath: null, transforms: [] }] },
      { cat: 'a b"' },
    );
    const html = '<ul><li data-cat=\'a b"\'><span class="name">one</span></li><li data-cat="a"><span class="name">two</span></li></ul>';
    const page = parsePage({ html, url: 'https://a.test/', finalUrl: 'https://a.test/', spec });
    expect(page.items.map((i) => i.fields.name)).toEqual(['one']);
  });

  it('names the params a spec needs and keeps a spec without placeholders as it is', () => {
    const plain = sampleSpec;
    expect(specWithParams(plain, { a: '1' })).toBe(plain);
    expect(specParamNames({ item_root: '.{{a}}', next_link_selector: null, item_fields: [{ name: 'x', selector: '[x="{{b}}"]', attribute: null, xpath: null, transforms: [] }] })).toEqual(['a', 'b']);
  });
});
