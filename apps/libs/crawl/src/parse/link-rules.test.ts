import { describe, expect, it } from 'vitest';
import type { CrawlSpec } from '@trawl/schemas';
import { testSpec } from '../rules/test-spec.ts';
import { parsePage } from './parse-page.ts';

const url = 'http://jobs.example/list';
const parse = (html: string, spec: Partial<CrawlSpec>, at = url, finalUrl = at) => parsePage({ html, url: at, finalUrl, spec: testSpec(spec) });
const listing = (head: string, body = '') => `<html><head>${head}</head><body>${body}<ul><li class="job"><b>One</b></li><li class="job"><b>Two</b></li></ul></body></html>`;
const items: Partial<CrawlSpec> = { item_root: 'li.job', item_fields: [{ name: 'title', selector: 'b', attribute: null, xpath: null, transforms: [] }] };

describe('parsePage: rel=nofollow and the robots meta tag', () => {
  const html = `<a href="/a">a</a><a rel="nofollow" href="/b">b</a><a rel="external NoFollow" href="/c">c</a>
    <a rel="nofollow" href="/a">a again</a><a rel="nofollow" href="/d">d</a><a href="/d">d plain</a><area rel="nofollow" href="/e">`;

  it('drops links marked nofollow unless follow_nofollow, and follows one the page also links plainly', () => {
    const page = parse(`<body>${html}</body>`, { follow_nofollow: false });
    expect(page.links).toEqual(['http://jobs.example/a', 'http://jobs.example/d']);
    expect(page.dropped).toMatchObject({ nofollow: 3 });
    expect(parse(`<body>${html}</body>`, { follow_nofollow: true }).links).toEqual(['http://jobs.example/a', 'http://jobs.example/b', 'http://jobs.example/c', 'http://jobs.example/d', 'http://jobs.example/e']);
  });

  it('follows no link of a page whose robots meta says nofollow or none', () => {
    for (const content of ['nofollow', 'noindex, nofollow', 'NONE']) {
      const page = parse(`<head><meta name="Robots" content="${content}"></head><body>${html}</body>`, { follow_nofollow: false });
      expect(page.links, content).toEqual([]);
      expect(page.dropped, content).toEqual({ nofollow: 7 });
    }
    expect(parse(`<head><meta name="robots" content="noindex"></head><body>${html}</body>`, { follow_nofollow: false }).links).toHaveLength(2);
    expect(parse(`<head><meta name="robots" content="nofollow"></head><body>${html}</body>`, { follow_nofollow: true }).links).toHaveLength(5);
  });

  it('keeps following a nofollow next link: pagination is the website\'s own rule', () => {
    const page = parse(`<head><meta name="robots" content="nofollow"></head><body><a rel="nofollow next" class="next" href="/list?page=2">next</a></body>`, {
      follow_nofollow: false, pagination_type: 'next_link', next_link_selector: 'a.next',
    });
    expect(page.links).toEqual([]);
    expect(page.nextPage).toBe('http://jobs.example/list?page=2');
  });
});

describe('parsePage: rel=canonical (honour_canonical)', () => {
  const on = { ...items, honour_canonical: true };

  it('a page naming another URL of its host as canonical is a duplicate: no items, its links kept', () => {
    const page = parse(listing('<link rel="canonical" href="/jobs/1">', '<a href="/x">x</a>'), on, 'http://jobs.example/jobs/1?ref=home');
    expect(page.canonical).toBe('http://jobs.example/jobs/1');
    expect(page.items).toEqual([]);
    expect(page.links).toEqual(['http://jobs.example/x']);
  });

  it('a page that is its own canonical (as requested, as normalised, or where it was redirected) keeps its items', () => {
    for (const [at, final] of [
      // The tag's utm_ parameter and fragment are dropped by normalisation: the same URL.
      ['http://jobs.example/jobs/1', 'http://jobs.example/jobs/1'],
      ['http://jobs.example/old/1', 'http://jobs.example/jobs/1'],
    ] as const) {
      const page = parse(listing('<link rel="canonical" href="http://JOBS.example/jobs/1?utm_source=feed#top">'), on, at, final);
      expect(page.canonical, at).toBeNull();
      expect(page.items, at).toHaveLength(2);
    }
  });

  it('honours no canonical on another host, refused by the rules, disagreeing with another, or when off', () => {
    const cases: [string, Partial<CrawlSpec>][] = [
      ['<link rel="canonical" href="http://other.example/jobs/1">', on],
      ['<link rel="canonical" href="/private/1">', { ...on, exclude_patterns: ['/private/'] }],
      ['<link rel="canonical" href="/a"><link rel="canonical" href="/b">', on],
      ['<link rel="canonical" href="mailto:x@y.z">', on],
      ['<link rel="canonical" href="/jobs/1">', { ...items, honour_canonical: false }],
    ];
    for (const [head, spec] of cases) {
      const page = parse(listing(head), spec, 'http://jobs.example/jobs/1?ref=x');
      expect(page.canonical, head).toBeNull();
      expect(page.items, head).toHaveLength(2);
    }
    // Two tags naming the same URL agree.
    expect(parse(listing('<link rel="canonical" href="/a"><link rel="canonical" href="http://jobs.example/a">'), on).canonical).toBe('http://jobs.example/a');
  });

  it('a paginated listing whose pages say page 1 is their canonical: page 2 is a duplicate whose next page is still found', () => {
    const spec = { ...on, pagination_type: 'page_param', page_param: 'page' } as Partial<CrawlSpec>;
    const page2 = parse(listing('<link rel="canonical" href="/list">'), spec, 'http://jobs.example/list?page=2');
    expect(page2).toMatchObject({ canonical: 'http://jobs.example/list', items: [], nextPage: 'http://jobs.example/list?page=3' });
    // A listing whose pages are their own canonical (what most sites say) keeps every page's items.
    const own = parse(listing('<link rel="canonical" href="/list?page=2">'), spec, 'http://jobs.example/list?page=2');
    expect(own).toMatchObject({ canonical: null, nextPage: 'http://jobs.example/list?page=3' });
    expect(own.items).toHaveLength(2);
  });
});
