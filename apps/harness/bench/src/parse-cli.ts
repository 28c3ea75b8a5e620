/**
 * `npm run bench:parse -w @trawl/bench -- [--pages 300] [--reps 5]`
 *
 * The worker's biggest CPU item, parsing, on the bench site's pages, no I/O. Prints µs per page:
 *
 *  - htmlparser2 alone (the floor),
 *  - the crawl's parsePage without items and with items (what the worker runs: selectors compiled
 *    once by css-select, apps/libs/crawl/src/parse/select.ts),
 *  - the limit's page work (`limit-parse.ts`: cheerio, `.find(selector).first()` per field, every
 *    anchor normalised), so Trawl's parse and the limit's can be told apart from the rest.
 *
 * parsePage and the limit read the same items from every page (checked).
 */
import { parseArgs } from 'node:util';
import { parseDocument } from 'htmlparser2';
import { compileRules, parsePage } from '@trawl/crawl';
import { crawlSpec } from '@trawl/store';
import { DEFAULT_SITE, ITEM_FIELDS, ITEM_ROOT, pageHtml } from './site/site-model.ts';
import { limitParse } from './contenders/limit-parse.ts';
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
const fields = ITEM_FIELDS.map((f) => ({ ...f, xpath: null, transforms: [] }));
const withItems = { ...crawlSpec(null, { depth: 100, max_pages: 0 }), item_root: ITEM_ROOT, item_fields: fields };
const withoutItems = { ...withItems, item_root: null, item_fields: [] };
const rulesWith = compileRules(withItems);
const rulesWithout = compileRules(withoutItems);
const limitConfig = { itemRoot: ITEM_ROOT, itemFields: fields };
const opts = { xmlMode: false, decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true };

function time(fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(50, pages); i++) fn(i); // warm the JIT
  const t = performance.now();
  for (let r = 0; r < reps; r++) for (let i = 0; i < pages; i++) fn(i);
  return Math.round(((performance.now() - t) * 1000) / (reps * pages));
}

for (let i = 0; i < pages; i++) {
  const ours = parsePage({ html: html[i]!, url: url(i), finalUrl: url(i), rules: rulesWith }).items.map((item) => item.fields);
  const limit = limitParse(limitConfig, url(i), html[i]!).items;
  if (JSON.stringify(ours) !== JSON.stringify(limit)) throw new Error(`parsePage and the limit read different items from ${url(i)}:\n${JSON.stringify(ours)}\n${JSON.stringify(limit)}`);
}

const rows = [
  ['htmlparser2 parseDocument', time((i) => parseDocument(html[i]!, opts))],
  ['parsePage, no items (links, base, pagination)', time((i) => parsePage({ html: html[i]!, url: url(i), finalUrl: url(i), rules: rulesWithout }))],
  ['parsePage with 10 items (the worker)', time((i) => parsePage({ html: html[i]!, url: url(i), finalUrl: url(i), rules: rulesWith }))],
  ["the limit's page work (cheerio, limit-parse.ts)", time((i) => limitParse(limitConfig, url(i), html[i]!))],
] as const;
say(`parsing ${pages} bench pages × ${reps} (µs per page, one thread)`);
say(table(['what', 'µs/page'], rows.map((r) => [r[0], r[1]])));
const file = writeResults('parse.json', { command: `npm run bench:parse -w @trawl/bench -- ${process.argv.slice(2).join(' ')}`, pages, reps, rows: Object.fromEntries(rows) });
say();
say(`JSON: ${file}`);
