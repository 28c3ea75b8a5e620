/**
 * A re-extraction's page (CrawlSpec.reextract_of): the body its source job stored, read from the
 * content store instead of the network. Nothing goes to the site — no robots.txt, no politeness
 * slot, no proxy, no session, no browser, no sitemap — so a re-extraction costs the site nothing
 * and needs none of its crawl's request options.
 *
 * The frontier puts the stored page on the request (FetchRequested.cached: the source job's page,
 * else the user's HTTP cache entry of the URL). A request without one, or whose body is gone from
 * the store, fails NOT_STORED for good: a re-extraction never falls back to a fetch.
 */
import type { CachedPage } from '@trawl/schemas';
import { NotStoredError } from '../errors.ts';
import { isHtmlType, looksLikeHtml } from '../fetch/content-type.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';

/** Where stored bodies are read (the worker's content store): undefined for one that is missing or unreadable. */
export interface StoredBodyReader {
  body(hash: string, options?: { signal?: AbortSignal }): Promise<string | undefined>;
}

export function isReextraction(request: Pick<FetchWithSpec, 'spec'>): boolean {
  return Boolean(request.spec.reextract_of);
}

/** The stored page as this request's result, and the hash it was read by. Throws NotStoredError. */
export async function storedPage(request: FetchWithSpec, bodies: StoredBodyReader | undefined, options: { signal?: AbortSignal } = {}): Promise<{ result: FetchResult; contentHash: string }> {
  const entry: CachedPage | null | undefined = request.cached;
  const of = `job ${request.spec.reextract_of}`;
  if (!entry) throw new NotStoredError(`${request.url}: ${of} kept no body of this page (it asked for no formats and did not store it for the HTTP cache)`);
  if (!bodies) throw new NotStoredError(`${request.url}: this worker has no content store to read ${of}'s body from`);
  const started = performance.now();
  const body = await bodies.body(entry.content_hash, options);
  if (body === undefined) throw new NotStoredError(`${request.url}: the body ${of} stored (${entry.content_hash.slice(0, 12)}…) is no longer in the content store`);
  const essence = entry.content_type?.split(';')[0]?.trim().toLowerCase() ?? null;
  return {
    contentHash: entry.content_hash,
    result: {
      url: request.url,
      finalUrl: entry.final_url,
      status: entry.status,
      contentType: entry.content_type,
      bytes: Buffer.byteLength(body, 'utf8'),
      wireBytes: 0,
      fetchMs: Math.round(performance.now() - started),
      body,
      isHtml: essence ? isHtmlType(essence) : looksLikeHtml(body.slice(0, 512)),
      truncated: false,
      redirects: [],
      retryAfterMs: null,
      charset: 'utf-8',
      renderMode: 'http',
      validators: { etag: entry.etag, lastModified: entry.last_modified },
    },
  };
}
