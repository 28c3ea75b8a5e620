/**
 * The content store's cost per page: deriving text and Markdown, and storing body + Markdown in
 * the S3 of the environment (a fresh bucket), over distinct generated article pages of ~20 KB.
 * Prints figures and a JSON line. `npx tsx bench/store-cost.ts [pages]`.
 */
import { derivePage } from '../src/derive-formats.ts';
import { storePageContent } from '../src/page-content.ts';
import { testContentStore } from '../src/testing.ts';

const pages = Number(process.argv[2] ?? 200);
const page = (i: number): string =>
  `<html><head><title>Page ${i}</title></head><body><nav>${Array.from({ length: 30 }, (_, k) => `<a href="/n/${k}">Nav ${k}</a>`).join(' ')}</nav><article><h1>Page ${i}</h1>${Array.from({ length: 40 }, (_, k) => `<p>Paragraph ${k} of page ${i}: ${'the quick brown fox jumps over the lazy dog. '.repeat(10)}<a href="/p/${i}/${k}">more</a></p>`).join('')}</article><footer>Footer</footer></body></html>`;

const html = Array.from({ length: pages }, (_, i) => page(i));
let t = performance.now();
for (let i = 0; i < pages; i++) derivePage(html[i]!, `http://bench.test/${i}`);
const deriveMs = (performance.now() - t) / pages;

const store = await testContentStore();
t = performance.now();
for (let i = 0; i < pages; i++) await storePageContent(store, { html: html[i]!, finalUrl: `http://bench.test/${i}` }, ['html', 'markdown']);
const storeMs = (performance.now() - t) / pages;
t = performance.now();
for (let i = 0; i < pages; i++) await storePageContent(store, { html: html[i]!, finalUrl: `http://bench.test/${i}` }, ['html', 'markdown']);
const againMs = (performance.now() - t) / pages;
await store.delete(await store.list());
store.close();

const kb = Buffer.byteLength(html[0]!) / 1024;
console.log(`pages ${pages} of ${kb.toFixed(1)} KB: derive ${deriveMs.toFixed(2)} ms/page; derive + store body and Markdown ${storeMs.toFixed(2)} ms/page; again (already stored: HEADs only) ${againMs.toFixed(2)} ms/page`);
console.log(JSON.stringify({ pages, pageKb: Number(kb.toFixed(1)), deriveMsPerPage: Number(deriveMs.toFixed(2)), storeMsPerPage: Number(storeMs.toFixed(2)), storedAgainMsPerPage: Number(againMs.toFixed(2)) }));
