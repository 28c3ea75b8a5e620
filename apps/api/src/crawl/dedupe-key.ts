/**
 * The identity of a crawl request, for dedupe: the same spider, the same set of start URLs (order
 * and duplicates do not matter), the same depth and the same params. `max_pages` is deliberately
 * left out: a repeat that only asks for a different page budget is the same crawl.
 *
 * URLs are compared after WHATWG parsing (lower-case scheme and host, default port dropped,
 * dot-segments resolved) and without their fragment, which never reaches the server.
 */
import { createHash } from 'node:crypto';

export interface DedupeInput {
  readonly spider: string | null;
  readonly start_urls: readonly string[];
  readonly depth: number;
  readonly params: Readonly<Record<string, string>>;
}

export function canonicalUrl(raw: string): string {
  const url = new URL(raw);
  url.hash = '';
  return url.href;
}

/** Start URLs in canonical spelling, sorted, without duplicates. */
export function canonicalStartUrls(urls: readonly string[]): string[] {
  return [...new Set(urls.map(canonicalUrl))].sort();
}

export function dedupeKey(input: DedupeInput): string {
  const params = Object.keys(input.params)
    .sort()
    .map((k) => [k, input.params[k]]);
  const canonical = JSON.stringify([input.spider ?? null, canonicalStartUrls(input.start_urls), input.depth, params]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
