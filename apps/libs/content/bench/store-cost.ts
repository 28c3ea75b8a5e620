/**
 * The content store's cost per page: deriving text and Markdown, and storing body + Markdown in
 * the S3 of the environment (a fresh bucket), over distinct generated article pages of ~20 KB.
 * Then what a scrape costs this process in CPU (less sensitive to a busy machine than the wall
 * clock): the worker's store of the body, Markdown and metadata with the formats derived already
 * (as its parse threads hand them over), 8 pages at a time, and the API's read back of the
 * metadata and Markdown. Prints figures and a JSON line. `npx tsx bench/store-cost.ts [pages]`.
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

// A scrape's share: fresh pages (other bytes than above), formats derived beforehand.
const scraped = html.map((h) => h.replace('<title>', '<title>Scraped '));
const derived = scraped.map((h, i) => derivePage(h, `http://bench.test/s/${i}`));
const metadata = (i: number) => ({ title: `Scraped page ${i}`, description: null, language: 'en', canonical: null, open_graph: {}, twitter: {}, json_ld: [], microdata: [] });
const inParallel = async (f: (i: number) => Promise<unknown>): Promise<void> => {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = next++; i < pages; i = next++) await f(i);
  }));
};
let cpu = process.cpuUsage();
const stored = new Array<Awaited<ReturnType<typeof storePageContent>>>(pages);
await inParallel(async (i) => {
  stored[i] = await storePageContent(store, { html: scraped[i]!, finalUrl: `http://bench.test/s/${i}`, derived: { text: derived[i]!.text, markdown: derived[i]!.markdown }, metadata: metadata(i) }, ['html', 'metadata', 'markdown']);
});
const used = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000 / pages;
};
const storeCpuMs = used(cpu);
cpu = process.cpuUsage();
await inParallel(async (i) => {
  const hashes = new Map(stored[i]!.formats.map((f) => [f.format, f.hash]));
  await Promise.all([store.get(hashes.get('metadata')!), store.get(hashes.get('markdown')!)]);
});
const readCpuMs = used(cpu);
await store.delete(await store.list());
store.close();

const kb = Buffer.byteLength(html[0]!) / 1024;
console.log(`pages ${pages} of ${kb.toFixed(1)} KB: derive ${deriveMs.toFixed(2)} ms/page; derive + store body and Markdown ${storeMs.toFixed(2)} ms/page; again (already stored: HEADs only) ${againMs.toFixed(2)} ms/page`);
console.log(`a scrape's content in CPU: store body, Markdown and metadata (derived already) ${storeCpuMs.toFixed(2)} ms/page; read metadata and Markdown back ${readCpuMs.toFixed(2)} ms/page`);
console.log(JSON.stringify({ pages, pageKb: Number(kb.toFixed(1)), deriveMsPerPage: Number(deriveMs.toFixed(2)), storeMsPerPage: Number(storeMs.toFixed(2)), storedAgainMsPerPage: Number(againMs.toFixed(2)), scrapeStoreCpuMsPerPage: Number(storeCpuMs.toFixed(2)), scrapeReadCpuMsPerPage: Number(readCpuMs.toFixed(2)) }));
