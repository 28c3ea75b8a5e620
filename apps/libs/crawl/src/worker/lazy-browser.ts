import { BrowserFetcher, type BrowserFetcherOptions, type BrowserFetchOptions, type BrowserUsage } from '../fetch/browser-fetcher.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import type { PageFetcher } from '../fetch/page-fetcher.ts';

/**
 * A BrowserFetcher that starts Chromium on first use: most jobs never need it, and a worker that
 * never renders should not carry a browser. A failed launch is not remembered: the next fetch tries again.
 */
export function lazyBrowserFetcher(options: BrowserFetcherOptions = {}): PageFetcher & { close(): Promise<void>; usage(): BrowserUsage & { started: boolean } } {
  let launching: Promise<BrowserFetcher> | null = null;
  let started: BrowserFetcher | null = null;
  return {
    fetch(url: string, opts?: BrowserFetchOptions): Promise<FetchResult> {
      launching ??= BrowserFetcher.launch(options).then(
        (b) => (started = b),
        (err: unknown) => {
          launching = null;
          throw err;
        },
      );
      return launching.then((b) => b.fetch(url, opts));
    },
    /** Chromium not started yet: nothing pending, the tabs it would open. */
    usage() {
      return started ? { ...started.usage(), started: true } : { pending: 0, tabs: options.concurrency ?? 2, started: false };
    },
    async close(): Promise<void> {
      const b = launching;
      launching = null;
      started = null;
      if (b) await (await b.catch(() => null))?.close();
    },
  };
}
