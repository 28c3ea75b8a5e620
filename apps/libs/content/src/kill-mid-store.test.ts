/**
 * A writer SIGKILLed while storing, against the real S3 of the environment: what it wrote is whole
 * (every object matches its hash), and a second writer of the same pages completes the set writing
 * only what was missing, so nothing is stored twice and nothing is lost.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { contentHash } from './content-key.ts';
import type { ContentStore } from './content-store.ts';
import { killTestPage } from './kill-store-child.ts';
import { storePageContent } from './page-content.ts';
import { testContentStore } from './testing.ts';

const PAGES = 40;
let store: ContentStore | undefined;
afterEach(async () => {
  if (store) {
    await store.delete(await store.list());
    store.close();
  }
});

it('loses nothing and stores nothing twice when the writer is SIGKILLed mid-store', async () => {
  store = await testContentStore();
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./kill-store-child.ts', import.meta.url)), store.bucket, String(PAGES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let done = 0;
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      done += chunk.toString().trim().split('\n').length;
      // Killed between pages' objects: some pages whole, one with part of its formats.
      if (done >= 5) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('exit', () => resolve());
    child.on('error', reject);
  });
  await new Promise((r) => child.once('exit', r));
  expect(done).toBeGreaterThanOrEqual(5);
  expect(done).toBeLessThan(PAGES);

  const afterKill = await store.list();
  for (const hash of afterKill) expect(contentHash((await store.get(hash)).body)).toBe(hash);

  let written = 0;
  const expected = new Set<string>();
  for (let i = 0; i < PAGES; i++) {
    const page = await storePageContent(store, { html: killTestPage(i), finalUrl: `http://quay.test/${i}` }, ['html', 'text', 'markdown']);
    written += page.written;
    expected.add(page.contentHash);
    for (const f of page.formats) expected.add(f.hash);
  }
  const final = await store.list();
  expect(final.sort()).toEqual([...expected].sort());
  expect(written).toBe(expected.size - afterKill.length);
});
