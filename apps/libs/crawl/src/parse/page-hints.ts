import type { Document, Element } from 'domhandler';
import { normaliseUrlOrNull } from '../url/normalise.ts';
import { attributeOf, selectAllIn } from './select.ts';

/** Whether `rel` (a space-separated token list, as on `<a>` and `<link>`) holds `token`. */
export function relHas(rel: string | undefined, token: string): boolean {
  if (!rel) return false;
  for (const t of rel.toLowerCase().split(/[\t\n\f\r ]+/)) if (t === token) return true;
  return false;
}

/**
 * Whether the page asks robots not to follow its links: `<meta name="robots">` whose content holds
 * `nofollow` or `none` (noindex + nofollow), as search engines read it. The header form
 * (`X-Robots-Tag`) is not read: a fetch result keeps no response headers.
 */
export function metaNofollow(doc: Document): boolean {
  for (const meta of selectAllIn(doc, 'meta[name][content]')) {
    if ((attributeOf(meta, 'name') ?? '').trim().toLowerCase() !== 'robots') continue;
    for (const token of (attributeOf(meta, 'content') ?? '').toLowerCase().split(/[\s,]+/)) if (token === 'nofollow' || token === 'none') return true;
  }
  return false;
}

/**
 * The page's `<link rel="canonical" href>`, resolved against `base` and normalised; null when it has
 * none, an unusable one (not http(s)), or several that disagree (then the page names no canonical,
 * as search engines read it).
 */
export function canonicalOf(doc: Document, base: URL): string | null {
  let canonical: string | null = null;
  for (const link of selectAllIn(doc, 'link[rel][href]') as Element[]) {
    if (!relHas(attributeOf(link, 'rel'), 'canonical')) continue;
    const url = normaliseUrlOrNull(attributeOf(link, 'href') ?? '', base);
    if (url === null) continue;
    if (canonical !== null && canonical !== url) return null;
    canonical = url;
  }
  return canonical;
}
