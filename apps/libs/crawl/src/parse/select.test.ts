import { describe, expect, it } from 'vitest';
import { load } from 'cheerio/slim';
import type { Element } from 'domhandler';
import { loadHtml } from './load-html.ts';
import { collapsedText, rawText } from './bounded-text.ts';
import { attributeOf, selectAllIn, selectFirstIn } from './select.ts';

const html = `<!doctype html><html><head><base href="/root/"><title>t</title></head><body>
  <nav><a href="/a">A</a> <a href="">empty</a> <a name="x">no href</a> <area href="/area"></nav>
  <article class="job" data-id="1"><h2> First <em>job</em> </h2><a class="apply" href="/apply/1">apply</a>
    <span>one</span><span>two</span><input type="checkbox" checked><select><option>Paris</option><option value="v">Lyon</option></select></article>
  <article class="job" data-id="2"><h2>Second</h2><a href="/b">b</a><a href="/c">c</a><input type="radio"></article>
  <p class="job">not an article</p><footer><a class="next" href="?page=2">next</a></footer>
</body></html>`;

const selectors = [
  'a[href], area[href]', 'base[href]', 'article.job', '.job', 'article.job h2', 'body article:nth-child(2)', 'h2 + a', 'span ~ span',
  'a:eq(1)', 'span:first', 'article:last', 'a.next', 'option', 'input', 'missing', 'select > option:first-child',
];

describe('select: the same answers as cheerio', () => {
  const doc = loadHtml(html);
  const $ = load(doc);

  it.each(selectors)('%s from the document: every match, in document order, and the first', (selector) => {
    const ours = selectAllIn(doc, selector);
    expect(ours).toEqual($(selector).toArray());
    expect(selectFirstIn(doc, selector)).toBe(ours[0] ?? null);
  });

  it.each(selectors)('%s within each item: only below the item', (selector) => {
    for (const item of selectAllIn(doc, 'article.job')) {
      expect(selectAllIn(item, selector)).toEqual($(item).find(selector).toArray());
      expect(selectFirstIn(item, selector)).toBe(($(item).find(selector).first().get(0) as Element | undefined) ?? null);
    }
  });

  it('text and attributes read as cheerio reads them', () => {
    const elements = selectAllIn(doc, '*');
    expect(elements.length).toBeGreaterThan(20);
    for (const el of elements) {
      expect(rawText(el, Number.POSITIVE_INFINITY)).toBe($(el).text());
      expect(collapsedText(el, Number.POSITIVE_INFINITY)).toBe($(el).text().replace(/\s+/g, ' ').trim());
      for (const name of ['href', 'class', 'checked', 'value', 'data-id', 'type', 'missing']) expect(attributeOf(el, name)).toBe($(el).attr(name));
    }
  });
});
