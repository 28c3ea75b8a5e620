import { describe, expect, it } from 'vitest';
import { measureCpu } from '../testing/cpu-time.ts';
import { compileRules } from '../rules/crawl-rules.ts';
import { testSpec } from '../rules/test-spec.ts';
import { itemKey } from './item-key.ts';
import { incrementPageParam } from './pagination.ts';
import { MAX_FIELD_CHARS } from './extract-items.ts';
import { loadHtml, MAX_NESTING_DEPTH } from './load-html.ts';
import { DEFAULT_PARSE_LIMITS, parsePage } from './parse-page.ts';
import { selectFirstIn } from './select.ts';
import type { Element } from 'domhandler';

/** The elements an element sits in (cheerio's `parents().length`). */
function elementsAround(el: Element): number {
  let n = 0;
  for (let p = el.parent; p && p.type !== 'root'; p = p.parent) n++;
  return n;
}

const url = 'http://jobs.example/list?page=1';

describe('parsePage: links', () => {
  it('keeps normalised, same-host, deduplicated links in document order', () => {
    const html = `<html><body>
      <a href="/b">b</a><a href="/a#top">a</a><a href="/a">again</a>
      <a href="/c?utm_source=x&z=1&y=2">c</a>
      <a href="HTTP://JOBS.EXAMPLE:80/d">d</a>
      <a href="http://elsewhere.example/">off</a>
      <a href="mailto:x@y.z">m</a><a href="javascript:void(0)">j</a><a href="tel:+1">t</a><a href="data:text/html,x">d</a>
      <a href="#frag">f</a><a>no href</a><area href="/area">
    </body></html>`;
    const page = parsePage({ html, url, finalUrl: url, spec: testSpec() });
    expect(page.links).toEqual([
      'http://jobs.example/b',
      'http://jobs.example/a',
      'http://jobs.example/c?y=2&z=1',
      'http://jobs.example/d',
      'http://jobs.example/area',
    ]);
    expect(page.dropped).toMatchObject({ off_host: 1, invalid: 5 });
  });

  it('resolves against <base href>, and against the final URL after a redirect', () => {
    const withBase = parsePage({ html: '<head><base href="/sub/"></head><a href="x">x</a>', url, finalUrl: url, spec: testSpec() });
    expect(withBase.links).toEqual(['http://jobs.example/sub/x']);
    const redirected = parsePage({ html: '<a href="x">x</a>', url, finalUrl: 'http://jobs.example/moved/here', spec: testSpec() });
    expect(redirected.links).toEqual(['http://jobs.example/moved/x']);
  });

  it('applies include/exclude patterns and trap guards', () => {
    const rules = compileRules(testSpec({ include_patterns: ['/jobs/'], exclude_patterns: ['/jobs/old'] }));
    const html = '<a href="/jobs/1">1</a><a href="/about">a</a><a href="/jobs/old/2">o</a><a href="/jobs/a/b/a/b">t</a>';
    expect(parsePage({ html, url, finalUrl: url, rules }).links).toEqual(['http://jobs.example/jobs/1']);
  });

  it('bounds an HTML bomb: links and anchors per page are capped', () => {
    const html = Array.from({ length: 20_000 }, (_, i) => `<a href="/p${i}">${i}</a>`).join('');
    const page = parsePage({ html, url, finalUrl: url, spec: testSpec(), limits: { ...DEFAULT_PARSE_LIMITS, maxLinks: 100, maxAnchors: 1_000, maxItems: 10 } });
    expect(page.links).toHaveLength(100);
    expect(page.dropped.capped).toBe(20_000 - 100);
  });
});

/**
 * HTML bombs, each parsed with the default limits: the CPU time and the growth of the process's peak
 * RSS (getrusage's maxRSS, which a spike during the synchronous parse cannot hide from) stay under
 * generous bounds, and the caps apply. The figures are printed for the record.
 */
describe('parsePage: HTML bombs are bounded in time and memory', () => {
  const MAX_MS = 5_000;
  const MAX_PEAK_GROWTH_MB = 300;
  const MB = 1024 * 1024;
  const itemSpec = testSpec({ item_root: 'article', item_fields: [{ name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] }, { name: 'data', selector: '', attribute: 'data-x', xpath: null, transforms: [] }] });

  function parseMeasured(name: string, html: string, spec = itemSpec, maxMs = MAX_MS) {
    const rssBefore = process.memoryUsage().rss;
    const { value: page, cpuMs, wallMs } = measureCpu(() => parsePage({ html, url, finalUrl: url, spec }));
    const peakGrowthMb = (process.resourceUsage().maxRSS * 1024 - rssBefore) / MB;
    console.info(`${name}: ${(html.length / MB).toFixed(1)} MB of HTML parsed in ${Math.round(cpuMs)} ms of CPU (${Math.round(wallMs)} ms wall), peak RSS growth ${Math.max(0, Math.round(peakGrowthMb))} MB`);
    expect(cpuMs, `${name} took ${cpuMs} ms of CPU`).toBeLessThan(maxMs);
    expect(peakGrowthMb, `${name} grew the peak RSS by ${peakGrowthMb} MB`).toBeLessThan(MAX_PEAK_GROWTH_MB);
    return page;
  }

  it('100,000 levels of nesting: capped at the depth a browser allows, what follows still read', () => {
    const depth = 100_000;
    const html = `<html><body>${'<div>'.repeat(depth)}<a href="/deep">d</a>${'</div>'.repeat(depth)}<article><h2>after</h2><a href="/after">a</a></article></body></html>`;
    const page = parseMeasured('nesting', html);
    expect(page.links).toEqual(['http://jobs.example/deep', 'http://jobs.example/after']);
    expect(page.items.map((i) => i.fields.title)).toEqual(['after']);
    // The anchor is the innermost element allowed: html, body and 509 divs around it.
    expect(elementsAround(selectFirstIn(loadHtml(html), 'a[href="/deep"]')!)).toBe(MAX_NESTING_DEPTH - 1);
  });

  it('a page nested less deeply than the cap parses as before', () => {
    const depth = MAX_NESTING_DEPTH - 3;
    const doc = loadHtml(`<html><body>${'<div>'.repeat(depth)}<a href="/x">x</a>${'</div>'.repeat(depth)}</body></html>`);
    expect(elementsAround(selectFirstIn(doc, 'a')!)).toBe(depth + 2);
  });

  it('10 MB attributes: an over-long link is dropped, an over-long field value is cut', () => {
    const huge = 'x'.repeat(10 * MB);
    const html = `<a href="/ok" data-junk="${huge}">ok</a><a href="/${huge}">long</a><article data-x="${huge}"><h2>t</h2></article>`;
    const page = parseMeasured('attributes', html);
    expect(page.links).toEqual(['http://jobs.example/ok']);
    expect(page.dropped.url_too_long).toBe(1);
    expect(page.items[0]!.fields.data!.length).toBe(MAX_FIELD_CHARS);
  });

  it('a page of nothing but links, as large as the fetcher lets through: only maxAnchors are looked at, maxLinks kept', () => {
    // ~650,000 anchors in the 10 MB a fetch returns at most (the DOM of every one is built, hence the memory).
    const count = Math.floor((10 * MB) / '<a href=/p000000>'.length);
    const html = Array.from({ length: count }, (_, i) => `<a href=/p${String(i).padStart(6, '0')}>`).join('');
    expect(html.length).toBeLessThanOrEqual(10 * MB);
    const page = parseMeasured('links', html, testSpec());
    expect(page.links).toHaveLength(DEFAULT_PARSE_LIMITS.maxLinks);
    // Past the cap every anchor is dropped; on a busy machine the rule budget (wall time) may end
    // the checks first, and those past it count as over_budget instead.
    expect((page.dropped.capped ?? 0) + (page.dropped.over_budget ?? 0)).toBe(count - DEFAULT_PARSE_LIMITS.maxLinks);
  });

  it('200,000 items: maxItems are extracted', () => {
    const html = `<html><body>${'<article><h2>job</h2></article>'.repeat(200_000)}</body></html>`;
    const page = parseMeasured('items', html);
    expect(page.items).toHaveLength(DEFAULT_PARSE_LIMITS.maxItems);
    expect(page.itemsCut.overCount).toBe(200_000 - DEFAULT_PARSE_LIMITS.maxItems);
  });
});

describe('parsePage: items', () => {
  const spec = testSpec({
    item_root: 'article.job',
    item_fields: [
      { name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] },
      { name: 'link', selector: 'a', attribute: 'href', xpath: null, transforms: [] },
      { name: 'logo', selector: 'img', attribute: 'src', xpath: null, transforms: [] },
      { name: 'id', selector: '', attribute: 'data-id', xpath: null, transforms: [] },
      { name: 'salary', selector: '.salary', attribute: null, xpath: null, transforms: [] },
    ],
  });
  const html = `<article class="job" data-id="17"><h2>  Rust
     engineer </h2><a href="/jobs/17">more</a><img src="logo.png"><span class="salary">€80k</span></article>
    <article class="job" data-id="18"><h2>Go &amp; Kafka</h2><a href="https://other.example/18">x</a></article>
    <article class="job"></article>`;

  it('reads text (collapsed) and attributes (URLs made absolute); missing fields are left out', () => {
    const page = parsePage({ html, url, finalUrl: url, spec });
    expect(page.items.map((i) => i.fields)).toEqual([
      { title: 'Rust engineer', link: 'http://jobs.example/jobs/17', logo: 'http://jobs.example/logo.png', id: '17', salary: '€80k' },
      { title: 'Go & Kafka', link: 'https://other.example/18', id: '18' },
    ]);
  });

  it('gives each item a stable key: same page, index and fields → same key', () => {
    const a = parsePage({ html, url, finalUrl: url, spec }).items;
    const b = parsePage({ html, url, finalUrl: url, spec }).items;
    expect(a.map((i) => i.key)).toEqual(b.map((i) => i.key));
    expect(new Set(a.map((i) => i.key)).size).toBe(a.length);
    expect(a[0]!.key).toMatch(/^[0-9a-f]{32}$/);
    expect(itemKey(url, 0, { a: '1', b: '2' })).toBe(itemKey(url, 0, { b: '2', a: '1' }));
    // Keys are stored by both read models: values computed by the implementation this one replaced.
    expect(itemKey('https://shop.example/p/1', 3, { title: 'Ünïcødé ✓ "x"', price: '12.50 EUR', a: '' })).toBe('f510c0a466538139e91e5d0bd6dfe559');
    expect(itemKey('https://shop.example/p/1', 0, {})).toBe('b747c0f0e3a6b6923e33454facfbcdca');
    expect(itemKey(url, 0, { a: '1' })).not.toBe(itemKey(url, 1, { a: '1' }));
  });

  it('caps items per page', () => {
    const many = Array.from({ length: 50 }, (_, i) => `<article class="job"><h2>${i}</h2></article>`).join('');
    const page = parsePage({ html: many, url, finalUrl: url, spec, limits: { ...DEFAULT_PARSE_LIMITS, maxItems: 5 } });
    expect(page.items).toHaveLength(5);
    expect(page.itemsCut).toEqual({ overCount: 45, overBytes: 0 });
  });

  it("answers cheerio's jQuery selector extensions (:first, :eq) as cheerio does, and only within the item", () => {
    const nested = testSpec({
      item_root: 'article.job',
      item_fields: [
        { name: 'second_link', selector: 'a:eq(1)', attribute: 'href', xpath: null, transforms: [] },
        { name: 'first_span', selector: 'span:first', attribute: null, xpath: null, transforms: [] },
        { name: 'outside', selector: 'footer', attribute: null, xpath: null, transforms: [] },
      ],
    });
    const page = `<article class="job"><a href="/a">a</a><a href="/b">b</a><span>one</span><span>two</span></article>
      <article class="job"><a href="/c">c</a></article><footer>not an item's</footer>`;
    expect(parsePage({ html: page, url, finalUrl: url, spec: nested }).items.map((i) => i.fields)).toEqual([
      { second_link: 'http://jobs.example/b', first_span: 'one' },
    ]);
  });

  it('extracts nothing without item_root', () => {
    expect(parsePage({ html, url, finalUrl: url, spec: testSpec() }).items).toEqual([]);
  });
});

describe('parsePage: pagination', () => {
  it('next_link: follows the selector even when the patterns would not keep it', () => {
    const spec = testSpec({ pagination_type: 'next_link', next_link_selector: 'a.next', include_patterns: ['/jobs/'] });
    const page = parsePage({ html: '<a href="/jobs/1">1</a><a class="next" href="/list?page=2">next</a>', url, finalUrl: url, spec });
    expect(page.nextPage).toBe('http://jobs.example/list?page=2');
    expect(page.links).toEqual(['http://jobs.example/jobs/1']); // the next page travels in next_page, not links
  });

  it('next_link: an off-host or self link is no next page', () => {
    const spec = testSpec({ pagination_type: 'next_link', next_link_selector: 'a.next' });
    expect(parsePage({ html: '<a class="next" href="http://evil.example/2">n</a>', url, finalUrl: url, spec }).nextPage).toBeNull();
    expect(parsePage({ html: '<a class="next" href="?page=1">n</a>', url, finalUrl: url, spec }).nextPage).toBeNull();
  });

  it('page_param: increments while the page has items, stops on an empty page', () => {
    const spec = testSpec({ pagination_type: 'page_param', page_param: 'page', item_root: 'li', item_fields: [{ name: 't', selector: '', attribute: null, xpath: null, transforms: [] }] });
    expect(parsePage({ html: '<ul><li>a</li></ul>', url, finalUrl: url, spec }).nextPage).toBe('http://jobs.example/list?page=2');
    expect(parsePage({ html: '<ul></ul>', url, finalUrl: url, spec }).nextPage).toBeNull();
    expect(incrementPageParam('http://e.com/s?q=x', 'p')).toBe('http://e.com/s?p=2&q=x');
    expect(incrementPageParam('http://e.com/s?p=abc', 'p')).toBeNull();
  });

  it('none: no next page', () => {
    expect(parsePage({ html: '<a class="next" href="/2">n</a>', url, finalUrl: url, spec: testSpec() }).nextPage).toBeNull();
  });
});

describe('parsePage: documents with many top-level nodes', () => {
  it('still answers selectors that start at html or body, and finds every anchor', () => {
    const html = `<!doctype html><html><body><div class="wrap"><a href="/in">in</a></div></body></html>${Array.from({ length: 40 }, (_, i) => `<a href="/after${i}">x</a>`).join('')}`;
    const spec = testSpec({ item_root: 'body div.wrap', item_fields: [{ name: 'href', selector: 'a', attribute: 'href', xpath: null, transforms: [] }] });
    const page = parsePage({ html, url, finalUrl: url, spec });
    expect(page.items).toHaveLength(1);
    expect(page.links).toHaveLength(41);
  });
});

describe('parsePage: the similarity hash', () => {
  const html = '<html><body><main><p>Warehouse assistant, night shifts, forklift licence a plus.</p></main></body></html>';
  const input = { html, url: 'https://a.test/', finalUrl: 'https://a.test/', spec: testSpec() };

  it('hashes the main text by default, and not at all where near-duplicate marking is off', () => {
    expect(parsePage(input).simhash).toMatch(/^[0-9a-f]+$/);
    expect(parsePage({ ...input, limits: { ...DEFAULT_PARSE_LIMITS, similarity: false } }).simhash).toBeNull();
  });
});
