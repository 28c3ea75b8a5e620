/**
 * What the worker fetches with, whichever fetcher it is: a page's fetch and a linked file's
 * download (worker/file-download.ts) both take one.
 */
import type { BrowserWork } from './browser-work.ts';
import type { FetchResult } from './fetch-result.ts';
import type { FetchOptions } from './http-fetcher.ts';
import type { ProxyEndpoint } from '../proxy/proxy-pool.ts';
import type { RequestProfile } from '../request/request-profile.ts';

/** Anything that turns a URL into a FetchResult: HttpFetcher, BrowserFetcher, lazyBrowserFetcher(). */
export interface PageFetcher {
  fetch(url: string, options?: { signal?: AbortSignal; conditional?: FetchOptions['conditional']; request?: RequestProfile | null; work?: BrowserWork | null; proxy?: ProxyEndpoint | null } & Pick<FetchOptions, 'documents' | 'accept' | 'maxBodyBytes' | 'oversize'>): Promise<FetchResult>;
}
