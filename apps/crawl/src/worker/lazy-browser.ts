import { BrowserFetcher, type BrowserFetcherOptions } from '../fetch/browser-fetcher.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import type { PageFetcher } from './page-processor.ts';

/**
 * A BrowserFetcher that starts Chromium on first use: most jobs never need it, and a worker that
 * never renders should not carry a browser. A failed launch is not remembered: the next fetch tries again.
 */
export function lazyBrowserFetcher(options: BrowserFetcherOptions = {}): PageFetcher & { close(): Promise<void> } {
  let launching: Promise<BrowserFetcher> | null = null;
  return {
    fetch(url: string, opts?: { signal?: AbortSignal }): Promise<FetchResult> {
      launching ??= BrowserFetcher.launch(options).catch((err: unknown) => {
        launching = null;
        throw err;
      });
      return launching.then((b) => b.fetch(url, opts));
    },
    async close(): Promise<void> {
      const b = launching;
      launching = null;
      if (b) await (await b.catch(() => null))?.close();
    },
  };
}
