/**
 * What a worker does with the cache entry a fetch request carries (FetchRequested.cached, looked up
 * by the frontier from the job's user's http_cache), as a pure decision:
 *
 * - `reuse`: the job set `max_age` and the entry was fetched (or revalidated) within it. No request
 *   at all — no robots.txt, no politeness slot — the stored body is parsed again.
 * - `revalidate`: the entry has a validator. The request goes out as ever (robots.txt, politeness),
 *   with If-None-Match / If-Modified-Since; a 304 reuses the stored body.
 * - `none`: a plain full fetch — no entry, the job bypasses the cache (`ignore_cache`), the job
 *   renders in a browser (a 304 for the document says nothing of what its scripts render, so
 *   browser pages are never served from the cache), or the entry has no validator and is not fresh.
 *
 * The age is counted from the entry's fetched_at on the worker's clock at the moment of the fetch,
 * not when the frontier requested it: a request that waited in a politeness queue is judged by how
 * old the page is when it would be fetched. An entry from the future (clock skew) is age 0.
 */
import type { CachedPage, CrawlSpec } from '@trawl/schemas';
import { conditionalHeaders } from './validators.ts';
import { needsBrowser, type BrowserSpec } from '../fetch/browser-work.ts';

export type CachePlan =
  | { readonly use: 'none'; readonly reason: 'no entry' | 'ignore_cache' | 'browser' | 'no validator' }
  | { readonly use: 'reuse'; readonly entry: CachedPage; readonly ageMs: number }
  | { readonly use: 'revalidate'; readonly entry: CachedPage; readonly headers: Readonly<Record<string, string>> };

export interface CachePlanInput {
  readonly cached: CachedPage | null | undefined;
  readonly spec: Pick<CrawlSpec, 'max_age' | 'ignore_cache'> & BrowserSpec;
  /** Epoch ms. */
  readonly now: number;
}

export function planCacheUse({ cached, spec, now }: CachePlanInput): CachePlan {
  if (!cached) return { use: 'none', reason: 'no entry' };
  if (spec.ignore_cache) return { use: 'none', reason: 'ignore_cache' };
  if (needsBrowser(spec)) return { use: 'none', reason: 'browser' };
  const ageMs = Math.max(0, now - cached.fetched_at.getTime());
  if (isFresh(ageMs, spec.max_age)) return { use: 'reuse', entry: cached, ageMs };
  const headers = conditionalHeaders({ etag: cached.etag, lastModified: cached.last_modified });
  if (Object.keys(headers).length === 0) return { use: 'none', reason: 'no validator' };
  return { use: 'revalidate', entry: cached, headers };
}

/** Within max_age (seconds, inclusive); null or 0 never reuses without asking the site. */
export function isFresh(ageMs: number, maxAgeSeconds: number | null): boolean {
  return maxAgeSeconds !== null && maxAgeSeconds > 0 && ageMs <= maxAgeSeconds * 1000;
}
