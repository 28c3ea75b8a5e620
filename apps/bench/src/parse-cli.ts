/**
 * `npm run bench:parse -w @trawl/bench -- [--pages 300] [--reps 5]`
 *
 * The worker's biggest CPU item, parsing, on the bench site's pages, no I/O. Prints µs per page:
 *
 *  - htmlparser2 alone (the floor),
 *  - the crawl's parsePage without items and with items (what the worker runs),
 *  - item extraction alone, as apps/crawl's extractItems does it (cheerio: `$(root)`, then
 *    `.find(selector).first()` per field per item, each a fresh css-select compile and query),
 *    against the same fields read with selectors compiled once per spec (css-select `compile`,
 *    `selectOne`) — the change proposed for apps/crawl/src/parse/extract-items.ts.
 *
 * Both extraction variants return the same fields (checked), without item keys.
 */
import { parseArgs } from 'node:util';
import { load } from 'cheerio/slim';
import { compile, selectAll, selectOne } from 'css-select';
import { getAttributeValue, textContent } from 'domutils';
import type { Document, Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { compileRules, parsePage } from '@trawl/crawl';
import { crawlSpec } from '@trawl/store';
import { DEFAULT_SITE, ITEM_FIELDS, ITEM_ROOT, pageHtml } from './site/site-model.ts';
import { say, table } from './report/print-table.ts';
import { writeResults } from './report/write-results.ts';
import { optionsOrExit } from './bench-options.ts';

const { values } = optionsOrExit('npm run bench:parse', 'options: [--pages 300] [--reps 5]', () =>
  parseArgs({ options: { pages: { type: 'string', default: '300' }, reps: { type: 'string', default: '5' } } }),
);
const pages = Number(values.pages);
const reps = Number(values.reps);
const html = Array.from({ length: pages }, (_, i) => pageHtml(DEFAULT_SITE, 8080, i + 1));
const url = (i: number) => `http://127.0.0.1:8080/p/${i + 1}`;
const fields = ITEM_FIELDS.map((f) => ({ ...f }));
const withItems = { ...crawlSpec(null, { depth: 100, max_pages: 0 }), item_root: ITEM_ROOT, item_fields: fields };
const withoutItems = { ...withItems, item_root: null, item_fields: [] };
const rulesWith = compileRules(withItems);
const rulesWithout = compileRules(withoutItems);
const WHITESPACE = /\s+/g;
const opts = { xmlMode: false, decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true };
const docs = html.map((h) => parseDocument(h, opts));

/** The fields as apps/crawl's extractItems reads them (cheerio, selectors compiled per call). */
function itemsCheerio(doc: Document): Record<string, string>[] {
  const $ = load(doc);
  const roots = $(ITEM_ROOT);
  const out: Record<string, string>[] = [];
  for (let i = 0; i < roots.length; i++) {
    const root = roots.eq(i);
    const item: Record<string, string> = {};
    for (const f of fields) {
      const el = root.find(f.selector).first();
      if (el.length === 0) continue;
      const v = f.attribute === null ? el.text().replace(WHITESPACE, ' ').trim() : el.attr(f.attribute);
      if (v !== undefined) item[f.name] = v;
    }
    out.push(item);
  }
  return out;
}

/** The same fields with the selectors compiled once (per spec, in a real worker). */
const compiledRoot = compile<Element, Element>(ITEM_ROOT);
const compiledFields = fields.map((f) => ({ ...f, query: compile<Element, Element>(f.selector) }));
function itemsCompiled(doc: Document): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const root of selectAll(compiledRoot, doc.children as Element[])) {
    const item: Record<string, string> = {};
    for (const f of compiledFields) {
      const el = selectOne(f.query, root.children as Element[]);
      if (!el) continue;
      const v = f.attribute === null ? textContent(el).replace(WHITESPACE, ' ').trim() : getAttributeValue(el, f.attribute);
      if (v !== undefined) item[f.name] = v;
    }
    out.push(item);
  }
  return out;
}

function time(fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(50, pages); i++) fn(i); // warm the JIT
  const t = performance.now();
  for (let r = 0; r < reps; r++) for (let i = 0; i < pages; i++) fn(i);
  return Math.round(((performance.now() - t) * 1000) / (reps * pages));
}

const a = JSON.stringify(itemsCheerio(docs[0]!));
const b = JSON.stringify(itemsCompiled(docs[0]!));
if (a !== b) throw new Error(`the two extractions differ:\n${a}\n${b}`);

const rows = [
  ['htmlparser2 parseDocument', time((i) => parseDocument(html[i]!, opts))],
  ['parsePage, no items (links, base, pagination)', time((i) => parsePage({ html: html[i]!, url: url(i), finalUrl: url(i), rules: rulesWithout }))],
  ['parsePage with 10 items (the worker today)', time((i) => parsePage({ html: html[i]!, url: url(i), finalUrl: url(i), rules: rulesWith }))],
  ['items only: cheerio, as extract-items.ts', time((i) => itemsCheerio(docs[i]!))],
  ['items only: selectors compiled once (proposed)', time((i) => itemsCompiled(docs[i]!))],
] as const;
say(`parsing ${pages} bench pages × ${reps} (µs per page, one thread)`);
say(table(['what', 'µs/page'], rows.map((r) => [r[0], r[1]])));
const file = writeResults('parse.json', { command: `npm run bench:parse -w @trawl/bench -- ${process.argv.slice(2).join(' ')}`, pages, reps, rows: Object.fromEntries(rows) });
say();
say(`JSON: ${file}`);
