import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobBoard, JOB_BOARD_SPEC, serve, type RunningServer } from '@trawl/demo-site';
import type { CrawlSpec, ItemField } from '@trawl/schemas';
import { testSpec } from '../rules/test-spec.ts';
import { parsePage } from './parse-page.ts';
import { xpathProblem } from './xpath-check.ts';
import { itemSpecProblem } from './item-spec-check.ts';
import { InvalidSpecError } from '../errors.ts';

const field = (name: string, f: Partial<ItemField>): ItemField => ({ name, selector: '', attribute: null, xpath: null, transforms: [], ...f });

/** The demo board's listing read by XPath: the same fields as JOB_BOARD_SPEC's CSS selectors. */
const XPATH_FIELDS: ItemField[] = [
  field('title', { xpath: 'h2' }),
  field('link', { xpath: 'h2/a/@href' }),
  field('company', { xpath: "p[@class='company']" }),
  field('location', { xpath: "normalize-space(p[contains(concat(' ', @class, ' '), ' location ')])" }),
  field('salary', { xpath: "*[@class='salary']" }),
];

let server: RunningServer;
let listingHtml: string;
let url: string;

beforeAll(async () => {
  server = await serve(createJobBoard({ listings: 25 }));
  url = `${server.origin}/jobs?page=2`;
  listingHtml = await (await fetch(url)).text();
});
afterAll(() => server?.close());

const parse = (spec: Partial<CrawlSpec>) => parsePage({ html: listingHtml, url, finalUrl: url, spec: testSpec({ ...JOB_BOARD_SPEC, ...spec }) });

describe('XPath beside CSS', () => {
  it('an XPath spec and the CSS spec give the same items from the demo board (same keys, same fields)', () => {
    const css = parse({});
    const xpath = parse({ item_root: null, item_root_xpath: "//article[@class='job']", item_fields: XPATH_FIELDS });
    expect(css.items).toHaveLength(10);
    expect(xpath.items).toEqual(css.items);
    expect(css.items[0]!.fields.link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/jobs\/11$/);
  });

  it('mixes: an XPath root with CSS fields, a CSS root with XPath fields', () => {
    const css = parse({});
    expect(parse({ item_root: null, item_root_xpath: '//section/article' }).items).toEqual(css.items);
    expect(parse({ item_fields: XPATH_FIELDS }).items).toEqual(css.items);
  });

  it('reads numbers and strings an expression computes, and leaves a field out when nothing is selected', () => {
    const { items } = parse({ item_fields: [field('id', { xpath: 'string(@data-id)' }), field('paragraphs', { xpath: 'count(p)' }), field('missing', { xpath: 'h3' }), field('title', { xpath: 'H2/A' })] });
    expect(items[0]!.fields).toEqual({ id: '11', paragraphs: '4', title: expect.any(String) });
  });

  it('refuses what is no XPath, and what costs more than the page (as CSS selectors are refused)', () => {
    expect(xpathProblem('//div[', 'root')?.kind).toBe('invalid');
    expect(xpathProblem('$items', 'root')?.kind).toBe('invalid');
    expect(xpathProblem("count(//a)", 'root')?.message).toMatch(/selects no elements/);
    expect(xpathProblem('//svg:path', 'root')?.kind).toBe('invalid');
    expect(xpathProblem("id('x')", 'field')?.kind).toBe('invalid');
    expect(xpathProblem('//li/following-sibling::li[1]', 'root')?.kind).toBe('costly');
    expect(xpathProblem('//a/following::b', 'root')?.kind).toBe('costly');
    expect(xpathProblem('//div//p//a', 'root')?.message).toMatch(/descendant steps/);
    expect(xpathProblem('//div[.//p[.//a]]', 'root')?.kind).toBe('costly');
    expect(xpathProblem('//div[//p]', 'root')?.kind).toBe('costly');
    expect(xpathProblem('//title', 'field')?.message).toMatch(/top of the page/);
    expect(xpathProblem('..//a', 'field')?.kind).toBe('costly');
    expect(xpathProblem('a[b[c[d]]]', 'field')?.message).toMatch(/nests predicates/);
    expect(xpathProblem(Array.from({ length: 17 }, () => 'a').join(' | '), 'root')?.kind).toBe('costly');
    for (const ok of ["//article[@class='job']", '//div[.//a]', 'h2/a/@href', "normalize-space(.//p[1])", '../@id', 'ancestor::section/@class']) {
      expect(xpathProblem(ok, ok.startsWith('//') ? 'root' : 'field')).toBeNull();
    }
  });

  it('a spec whose XPath the check refuses fails its pages INVALID_SPEC where they are parsed (a job from before the check)', () => {
    expect(() => parse({ item_root: null, item_root_xpath: '//article/following::article' })).toThrow(InvalidSpecError);
    expect(itemSpecProblem({ item_root: '.job', item_root_xpath: '//article', item_fields: [] })?.message).toMatch(/not both/);
  });
});

describe('transforms and the item schema', () => {
  const SCHEMA = JSON.stringify({
    type: 'object',
    required: ['title', 'salary', 'posted'],
    properties: { title: { type: 'string', minLength: 1 }, salary: { type: 'number', minimum: 80 }, posted: { type: 'string', format: 'date-time' }, link: { type: 'string', pattern: '^https?://' } },
  });
  const typed = (): Partial<CrawlSpec> => ({
    item_fields: [
      field('title', { selector: 'h2', transforms: [{ type: 'trim', pattern: null }] }),
      field('link', { xpath: 'h2/a', attribute: 'href', transforms: [{ type: 'absolute_url', pattern: null }] }),
      field('salary', { selector: '.salary', transforms: [{ type: 'number', pattern: null }] }),
      field('posted', { selector: 'time', attribute: 'datetime', transforms: [{ type: 'date', pattern: null }] }),
      field('job_id', { xpath: 'h2/a/@href', transforms: [{ type: 'regex', pattern: '/jobs/(\\d+)' }] }),
    ],
    item_schema: SCHEMA,
  });

  it('transforms each value before validation: number, ISO date, absolute URL, an RE2 capture', () => {
    const { items } = parse(typed());
    const first = items[0]!;
    expect(first.fields.salary).toMatch(/^\d+$/);
    expect(first.fields.posted).toMatch(/^2026-\d\d-\d\dT00:00:00\.000Z$/);
    expect(first.fields.job_id).toBe('11');
    expect(first.fields.link).toBe(`${server.origin}/jobs/11`);
  });

  it('keeps every item that fails its schema, with its errors (never drops one); the valid ones have none', () => {
    const { items } = parse(typed());
    expect(items).toHaveLength(10);
    const invalid = items.filter((i) => i.errors.length > 0);
    const valid = items.filter((i) => i.errors.length === 0);
    expect(invalid.length).toBeGreaterThan(0);
    expect(valid.length).toBeGreaterThan(0);
    for (const item of invalid) {
      expect(Number(item.fields.salary)).toBeLessThan(80);
      expect(item.errors).toEqual(['/salary must be >= 80']);
    }
    for (const item of valid) expect(Number(item.fields.salary)).toBeGreaterThanOrEqual(80);
  });

  it('a transform that cannot apply keeps the value and says why; a missing required field is an error too', () => {
    const { items } = parse({
      item_fields: [field('title', { selector: 'h2', transforms: [{ type: 'number', pattern: null }] }), field('code', { selector: 'h2', transforms: [{ type: 'regex', pattern: '^(\\d{4})$' }] })],
      item_schema: JSON.stringify({ type: 'object', required: ['title', 'salary'] }),
    });
    const first = items[0]!;
    expect(first.fields.title).not.toBe('');
    expect(first.errors[0]).toMatch(/^title: number: ".+" is not a number$/);
    expect(first.errors[1]).toMatch(/^code: regex: ".+" does not match/);
    expect(first.errors[2]).toBe("must have required property 'salary'");
  });

  it('refuses a schema or transform that cannot run, bounded: size, unknown keywords, backtracking patterns, a regex without a pattern', () => {
    const problem = (s: Partial<Parameters<typeof itemSpecProblem>[0]>) => itemSpecProblem({ item_fields: [], ...s });
    expect(problem({ item_schema: '{"type": "object", "propertees": {}}' })?.kind).toBe('schema');
    expect(problem({ item_schema: 'not json' })?.message).toMatch(/not JSON/);
    expect(problem({ item_schema: JSON.stringify({ type: 'object', description: 'x'.repeat(20_000) }) })?.message).toMatch(/over 16384 bytes/);
    expect(problem({ item_schema: JSON.stringify({ properties: { a: { pattern: '^(a+)\\1$' } } }) })?.kind).toBe('schema');
    expect(problem({ item_schema: JSON.stringify({ $ref: 'https://example.com/schema.json' }) })?.kind).toBe('schema');
    let deep: object = { type: 'string' };
    for (let i = 0; i < 20; i++) deep = { properties: { a: deep } };
    expect(problem({ item_schema: JSON.stringify(deep) })?.message).toMatch(/levels deep/);
    expect(problem({ item_fields: [field('a', { transforms: [{ type: 'regex', pattern: null }] })] })?.kind).toBe('transform');
    expect(problem({ item_fields: [field('a', { transforms: [{ type: 'regex', pattern: '(?=x)' }] })] })?.message).toMatch(/lookahead/);
    expect(problem({ item_fields: [field('a', { transforms: [{ type: 'trim', pattern: 'x' }] })] })?.message).toMatch(/takes no pattern/);
    expect(problem({ item_schema: SCHEMA, item_fields: typed().item_fields! })).toBeNull();
  });

  it('a schema pattern runs in RE2: one that backtracks exponentially in V8 (a 40-word summary ending in a dot) answers', () => {
    const { items } = parse({ item_fields: [field('a', { selector: 'p.summary' })], item_schema: JSON.stringify({ properties: { a: { pattern: '^(\\w+\\s?)+$' } } }) });
    expect(items[0]!.errors).toEqual(['/a must match pattern "^(\\w+\\s?)+$"']);
  });
});
