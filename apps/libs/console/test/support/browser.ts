/** Headless Chromium (the system's) for the console's end-to-end tests, and where screenshots go. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { endpoints, repoRoot } from '@trawl/streams';

export const ARTIFACTS_DIR = join(repoRoot, 'test-artifacts', 'console');

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  // pipe: Chromium exits with this process, even when a killed test run cannot close it.
  return puppeteer.launch({ executablePath: endpoints().chromiumPath, headless: true, pipe: true, args: CHROMIUM_ARGS, defaultViewport: { width: 1440, height: 960 } });
}

/** Saves a full-page screenshot under test-artifacts/console/; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Polls a page function until it returns a truthy value. */
export async function pageEventually<T>(page: Page, fn: () => T | Promise<T>, timeoutMs: number, what: string, everyMs = 200): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await page.evaluate(fn);
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
