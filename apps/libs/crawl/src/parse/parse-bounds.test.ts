/**
 * What one hostile website configuration or page can cost a worker: patterns, nested item roots,
 * item bytes. CPU time and memory bounds are generous; the figures are printed
 * for the record (docs/reliability.md, "Isolation").
 */
import { describe, expect, it } from 'vitest';
import { measureCpu } from '../testing/cpu-time.ts';
import { compileRules } from '../rules/crawl-rules.ts';
import { testSpec } from '../rules/test-spec.ts';
import { collapsedText, rawText } from './bounded-text.ts';
import { MAX_FIELD_CHARS } from './extract-items.ts';
import { loadHtml } from './load-html.ts';
import { DEFAULT_PARSE_LIMITS, parseLimitsFromEnv, parsePage } from './parse-page.ts';

const url = 'http://jobs.example/list';
const MB = 1024 * 1024;

/** The work's CPU time as `ms` (measureCpu: the machine's other work does not count) and its peak RSS growth. */
function measured<T>(name: string, run: () => T): { value: T; ms: number; peakGrowthMb: number } {
  const rssBefore = process.memoryUsage().rss;
  const { value, cpuMs, wallMs } = measureCpu(run);
  const peakGrowthMb = Math.max(0, (process.resourceUsage().maxRSS * 1024 - rssBefore) / MB);
  console.info(`${name}: ${Math.round(cpuMs)} ms of CPU (${Math.round(wallMs)} ms wall), peak RSS growth ${Math.round(peakGrowthMb)} MB`);
  return { value, ms: cpuMs, peakGrowthMb };
}

describe('parsePage: user patterns cannot hold a worker', () => {
  it('^https?://[^/]+/(a+)+$ with the link /aaaa…a! (40 a’s): the page parses in < 100 ms', () => {
    const rules = compileRules(testSpec({ include_patterns: ['^https?://[^/]+/(a+)+$'] }));
    const html = `<a href="/${'a'.repeat(40)}!">x</a><a href="/aaa">y</a>`;
    parsePage({ html: '<a href="/warm">w</a>', url, finalUrl: url, rules });
    const { value: page, ms } = measured('catastrophic pattern', () => parsePage({ html, url, finalUrl: url, rules }));
    expect(page.links).toEqual(['http://jobs.example/aaa']);
    expect(page.dropped.not_included).toBe(1);
    expect(ms).toBeLessThan(100);
  });

  it('a page whose rule checks outlast the budget drops its remaining links as over_budget', () => {
    // Linear, but the DFA gives up on this one: each 2 KB link costs milliseconds.
    const rules = compileRules(testSpec({ include_patterns: ['a[ab]{200}$'] }));
    let seed = 1;
    const ab = () => Array.from({ length: 2000 }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0x10000 ? 'a' : 'b')).join('');
    const html = Array.from({ length: 2_000 }, () => `<a href="/${ab()}">x</a>`).join('');
    const budget = 100;
    const { value: page, ms } = measured('rule budget', () => parsePage({ html, url, finalUrl: url, rules, limits: { ...DEFAULT_PARSE_LIMITS, ruleBudgetMs: budget } }));
    expect(page.dropped.over_budget).toBeGreaterThan(0);
    const checked = Object.entries(page.dropped).filter(([why]) => why !== 'over_budget').reduce((n, [, c]) => n + (c ?? 0), page.links.length);
    expect(checked + page.dropped.over_budget!).toBe(2_000);
    expect(ms).toBeLessThan(budget + 2_000);
  });
});

describe('parsePage: bounded extraction', () => {
  const spec = testSpec({
    item_root: 'div.item',
    item_fields: [
      { name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] },
      { name: 'all', selector: '', attribute: null, xpath: null, transforms: [] },
      { name: 'id', selector: '', attribute: 'data-id', xpath: null, transforms: [] },
    ],
  });

  it('a 10 MB page with 500 nested item roots: < 5 s, RSS growth < 300 MB, item bytes under the cap', () => {
    const filler = 'lorem ipsum dolor sit amet '.repeat(740); // ~20 KB a root, ~10 MB in all
    const html = `<html><body>${Array.from({ length: 500 }, (_, i) => `<div class="item" data-id="${i}"><h2>job ${i}</h2><p>${filler}</p>`).join('')}${'</div>'.repeat(500)}</body></html>`;
    expect(html.length).toBeGreaterThan(10 * 1000 * 1000);
    const { value: page, ms, peakGrowthMb } = measured(`nested roots (${(html.length / MB).toFixed(1)} MB)`, () => parsePage({ html, url, finalUrl: url, spec }));
    expect(ms).toBeLessThan(5_000);
    expect(peakGrowthMb).toBeLessThan(300);
    const bytes = page.items.reduce((n, it) => n + Object.entries(it.fields).reduce((m, [k, v]) => m + Buffer.byteLength(k) + Buffer.byteLength(v), 0), 0);
    expect(bytes).toBe(page.itemBytes);
    expect(bytes).toBeLessThanOrEqual(DEFAULT_PARSE_LIMITS.maxItemBytes);
    // Each root's text is its own (the nested roots' content belongs to them), cut to the field budget.
    expect(page.items[0]!.fields.title).toBe('job 0');
    expect(page.items[0]!.fields.all!.startsWith('job 0lorem ipsum')).toBe(true);
    expect(page.items[0]!.fields.all!.length).toBe(MAX_FIELD_CHARS);
    expect(page.items.length + page.itemsCut.overBytes).toBe(500);
    expect(page.itemsCut.overBytes).toBeGreaterThan(0);
    console.info(`nested roots: ${page.items.length} items kept (${(bytes / MB).toFixed(2)} MB), ${page.itemsCut.overBytes} cut by the ${DEFAULT_PARSE_LIMITS.maxItemBytes}-byte cap`);
  });

  it('a nested root is its own item and is not read again for its ancestor', () => {
    const html = `<div class="item" data-id="a"><h2>outer</h2> before <div class="item" data-id="b"><h2>inner</h2> inside</div> after</div>`;
    const page = parsePage({ html, url, finalUrl: url, spec });
    expect(page.items.map((i) => i.fields)).toEqual([
      { title: 'outer', all: 'outer before after', id: 'a' },
      { title: 'inner', all: 'inner inside', id: 'b' },
    ]);
    // The document is whole again afterwards (pagination and other readers see every node).
    expect(collapsedText(loadHtml(html), 1_000)).toBe('outer before inner inside after');
  });

  it('keeps the items that fit the byte cap, in page order, and counts the rest', () => {
    const html = Array.from({ length: 10 }, (_, i) => `<div class="item" data-id="${i}"><h2>${'x'.repeat(100)}</h2></div>`).join('');
    const page = parsePage({ html, url, finalUrl: url, spec, limits: { ...DEFAULT_PARSE_LIMITS, maxItemBytes: 1_000 } });
    // One item: title (5 + 100) + all (3 + 100) + id (2 + 1) = 211 bytes.
    expect(page.items.map((i) => i.index)).toEqual([0, 1, 2, 3]);
    expect(page.itemBytes).toBe(4 * 211);
    expect(page.itemsCut).toEqual({ overCount: 0, overBytes: 6 });
    // What the worker logs for the page: PageFetched has no field for it.
    expect(page.cut).toEqual({ linksCapped: 0, linksOverBudget: 0, itemsOverCount: 0, itemsOverBytes: 6 });
    expect(parsePage({ html, url, finalUrl: url, spec }).cut).toBeNull();
  });

  it('reads the configured limits from the environment, refusing nonsense', () => {
    expect(parseLimitsFromEnv({})).toEqual(DEFAULT_PARSE_LIMITS);
    expect(parseLimitsFromEnv({ TRAWL_PARSE_MAX_ITEM_BYTES: '1000', TRAWL_PARSE_RULE_BUDGET_MS: '50' })).toMatchObject({ maxItemBytes: 1000, ruleBudgetMs: 50 });
    expect(() => parseLimitsFromEnv({ TRAWL_PARSE_MAX_ITEM_BYTES: '-1' })).toThrow(/TRAWL_PARSE_MAX_ITEM_BYTES/);
    expect(parseLimitsFromEnv({ TRAWL_DOWNLOADS_MAX_PER_PAGE: '3' })).toMatchObject({ maxDownloads: 3 });
    expect(() => parseLimitsFromEnv({ TRAWL_DOWNLOADS_MAX_PER_PAGE: '0' })).toThrow(/TRAWL_DOWNLOADS_MAX_PER_PAGE/);
  });
});

describe('bounded text', () => {
  const reference = (text: string, max: number) => {
    const t = text.replace(/\s+/g, ' ').trim();
    const cut = t.slice(0, max);
    return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
  };

  it('answers what textContent, collapsed, trimmed and cut answers, for any budget', () => {
    const pieces = ['a', 'bc', ' ', '\n\t ', '\u00a0', '\u2028', '\ufeff', 'é', '😀', 'x y', '  z  ', '<b>', '</b>', '<i>q</i>', '<!-- c -->'];
    let seed = 7;
    const next = (n: number) => (seed = (seed * 16807) % 2147483647) % n;
    for (let round = 0; round < 300; round++) {
      const html = `<div>${Array.from({ length: 1 + next(30) }, () => pieces[next(pieces.length)]).join('')}</div>`;
      const el = loadHtml(html).children[0]!;
      const full = rawText(el, Number.POSITIVE_INFINITY);
      for (const max of [0, 1, 2, 3, 5, 8, 13, 1_000]) {
        expect(collapsedText(el, max), `${JSON.stringify(html)} / ${max}`).toBe(reference(full, max));
        expect(rawText(el, max)).toBe(cutRaw(full, max));
      }
    }
  });

  it('stops reading at the budget', () => {
    const big = loadHtml(`<div>${'<p>word </p>'.repeat(200_000)}</div>`).children[0]!;
    const { value, ms } = measured('budgeted read of 200,000 paragraphs', () => {
      let out = '';
      for (let i = 0; i < 1_000; i++) out = collapsedText(big, 100);
      return out;
    });
    expect(value).toBe('word '.repeat(20).slice(0, 100));
    expect(ms).toBeLessThan(1_000);
  });
});

function cutRaw(text: string, max: number): string {
  const cut = text.slice(0, max);
  return cut.length < text.length && /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}
