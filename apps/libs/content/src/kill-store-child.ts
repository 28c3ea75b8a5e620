/**
 * A writer for the kill test (kill-mid-store.test.ts): stores pages 0..N-1 of a known set with all
 * formats into the bucket it is given, printing each page's number once stored, until killed.
 */
import { contentStoreConfig } from './content-config.ts';
import { ContentStore } from './content-store.ts';
import { storePageContent } from './page-content.ts';

export const killTestPage = (i: number): string =>
  `<html><head><title>Manifest ${i}</title></head><body><article><h1>Manifest ${i}</h1><p>${`Line ${i}: crates, barrels and sacks bound for the northern quay. `.repeat(200)}</p></article></body></html>`;

if (process.argv[2]) {
  const store = new ContentStore({ ...contentStoreConfig(), bucket: process.argv[2] });
  const pages = Number(process.argv[3]);
  for (let i = 0; i < pages; i++) {
    await storePageContent(store, { html: killTestPage(i), finalUrl: `http://quay.test/${i}` }, ['html', 'text', 'markdown']);
    process.stdout.write(`${i}\n`);
  }
  store.close();
}
