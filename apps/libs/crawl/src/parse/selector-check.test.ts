import { describe, expect, it } from 'vitest';
import { checkSelector, MAX_SELECTOR_LIST, selectorProblem, SelectorError, specSelectors } from './selector-check.ts';
import { loadHtml } from './load-html.ts';
import { selectAllIn } from './select.ts';

describe('selectorProblem', () => {
  it.each([
    'div.job',
    'ul > li a[href^="/jobs/"]',
    'h2.title, h3.title',
    'tr:nth-child(2n+1) td:first-child',
    'a:contains("Next")',
    'li:first',
    'div:has(> a.apply)',
    'article:not(.sponsored) h2',
    'h2 + p',
    'a[data-q="{{query}}"]',
    '.x:is(.a, .b):not(:is(.c))',
  ])('lets %s run', (selector) => {
    expect(selectorProblem(selector)).toBeNull();
  });

  it.each([
    ['a:has(~ b)', /sibling combinator `~`/],
    ['i ~ b', /sibling combinator `~`/],
    ['b:not(i ~ b)', /sibling combinator `~`/],
    ['div:has(+ p)', /sibling combinator inside `:has`/],
    ['div:has(:contains("x"))', /:contains inside `:has`/],
    ['div:has(p:has(a))', /:has inside `:has`/],
    [':not(:is(:not(.a)))', /3 deep/],
    ['a b c d e f g h i j k l m n o p q', /17 compounds/],
  ])('refuses %s as costly', (selector, why) => {
    const problem = selectorProblem(selector);
    expect(problem?.kind).toBe('costly');
    expect(problem?.message).toMatch(why);
  });

  it('refuses a list longer than its cap', () => {
    const list = Array.from({ length: MAX_SELECTOR_LIST + 1 }, (_, i) => `.c${i}`).join(', ');
    expect(selectorProblem(list)).toMatchObject({ kind: 'costly' });
  });

  it.each(['div[', 'a::', ':bogus-pseudo', ''])('refuses %j as invalid', (selector) => {
    expect(selectorProblem(selector)?.kind).toBe('invalid');
  });

  it('throws a SelectorError carrying the selector and its code', () => {
    expect(() => checkSelector('a:has(~ b)')).toThrow(SelectorError);
    try {
      checkSelector('a:has(~ b)');
    } catch (err) {
      expect(err).toMatchObject({ code: 'TRAWL_INVALID_SELECTOR', retriable: false, selector: 'a:has(~ b)' });
    }
  });

  it('refuses the selector whose cost the issue measured, which really is quadratic', () => {
    // The reason for the rule, on a small page: 4,000 siblings already cost far more than a plain selector.
    const doc = loadHtml('<div>' + '<b>x</b>'.repeat(4_000) + '</div>');
    const started = performance.now();
    selectAllIn(doc, 'b:has(~ i)');
    const costlyMs = performance.now() - started;
    const plainStarted = performance.now();
    selectAllIn(doc, 'div > b');
    expect(costlyMs).toBeGreaterThan(10 * (performance.now() - plainStarted));
    expect(selectorProblem('b:has(~ i)')?.kind).toBe('costly');
  });
});

describe('specSelectors', () => {
  it('names each selector by its field and leaves empty ones out', () => {
    expect(specSelectors({ item_root: '.job', item_fields: [{ selector: 'h2' }, { selector: ' ' }, { selector: 'a' }], next_link_selector: null })).toEqual([
      ['item_root', '.job'],
      ['item_fields.0.selector', 'h2'],
      ['item_fields.2.selector', 'a'],
    ]);
  });
});

describe('where the check bites', () => {
  it('a spec saved before the check fails its pages at parse time, while its rules (which the frontier compiles) still compile', async () => {
    const { compileRules } = await import('../rules/crawl-rules.ts');
    const { parsePage } = await import('./parse-page.ts');
    const { testSpec } = await import('../rules/test-spec.ts');
    const { InvalidSpecError } = await import('../errors.ts');
    const spec = testSpec({ item_root: 'li ~ li', item_fields: [{ name: 't', selector: '', attribute: null, xpath: null, transforms: [] }] });
    const rules = compileRules(spec);
    expect(rules.check('http://a.test/x', 'http://a.test/')).toBeNull();
    expect(() => parsePage({ html: '<ul><li>a</li><li>b</li></ul>', url: 'http://a.test/', finalUrl: 'http://a.test/', rules })).toThrow(InvalidSpecError);
  });
});
