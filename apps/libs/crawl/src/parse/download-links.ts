/**
 * The linked files a page's downloads fetch (CrawlSpec.downloads): links and embedded media
 * (`a[href]`, `img[src]`, `source[src]`, `video[src]`, `audio[src]`, `embed[src]`, `object[data]`)
 * whose path's extension names a media type the job asked for (`application/pdf`, `image/*`), by
 * the mime-types table (mime-db, what Express and most Node servers serve types by). The answer's
 * own Content-Type is checked again when it comes (downloadTypeMatches): a `.pdf` link that answers
 * HTML is not kept. A link without an extension is not fetched: guessing would cost a request per
 * link of every page. Link rules (scope, patterns) do not apply — files live on other hosts (a CDN)
 * as often as not — but the egress rules, robots.txt and the host's politeness do, as for pages.
 */
import type { Document } from 'domhandler';
import { lookup } from 'mime-types';
import { isNonFetchableHref } from '../rules/href-filter.ts';
import { normaliseUrlOrNull } from '../url/normalise.ts';
import { selectAllIn } from './select.ts';

const SOURCES: readonly (readonly [string, string])[] = [
  ['a[href]', 'href'],
  ['img[src]', 'src'],
  ['source[src]', 'src'],
  ['video[src]', 'src'],
  ['audio[src]', 'src'],
  ['embed[src]', 'src'],
  ['object[data]', 'data'],
];

/** Longer URLs are traps or data, not files. */
const MAX_URL_LENGTH = 2048;

/** Whether a media type (a Content-Type's essence, lower-case) is one of `types` (`image/*` covers every image type). */
export function downloadTypeMatches(types: readonly string[], essence: string | null): boolean {
  if (!essence) return false;
  return types.some((t) => {
    const want = t.trim().toLowerCase();
    return want.endsWith('/*') ? essence.startsWith(want.slice(0, -1)) : essence === want;
  });
}

/** The media type a URL's path names by its extension, or null. */
export function typeByExtension(url: string): string | null {
  const path = new URL(url).pathname;
  const dot = path.lastIndexOf('.');
  if (dot === -1 || dot < path.lastIndexOf('/')) return null;
  return lookup(path) || null;
}

/** Normalised URLs of the page's files of `types`, links first then embedded media (each in document order), at most `max`. */
export function downloadLinks(doc: Document, base: URL, types: readonly string[], max: number): string[] {
  const out: string[] = [];
  if (types.length === 0 || max <= 0) return out;
  const seen = new Set<string>();
  for (const [selector, attr] of SOURCES) {
    for (const el of selectAllIn(doc, selector)) {
      const raw = el.attribs[attr] ?? '';
      if (raw.length > MAX_URL_LENGTH || isNonFetchableHref(raw)) continue;
      const url = normaliseUrlOrNull(raw, base);
      if (url === null || seen.has(url)) continue;
      seen.add(url);
      if (!downloadTypeMatches(types, typeByExtension(url))) continue;
      out.push(url);
      if (out.length >= max) return out;
    }
  }
  return out;
}
