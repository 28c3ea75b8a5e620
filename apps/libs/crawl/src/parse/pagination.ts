import type { Document } from 'domhandler';
import type { CrawlRules } from '../rules/crawl-rules.ts';
import { normaliseUrlOrNull } from '../url/normalise.ts';
import { attributeOf, selectFirstIn } from './select.ts';

/**
 * The next page of a listing, per the website's pagination type.
 *
 * - `next_link`: the href of the first `next_link_selector` match.
 * - `page_param`: the current URL with the `page_param` query value plus one (absent counts as 1),
 *   but only when this page had at least one item: an empty page is the end of the listing.
 * - `none`: no next page.
 *
 * A next page is a continuation of the page it was found on, not a hop away from the start: the
 * frontier requests it at the SAME depth (otherwise `max_depth: 1` would stop a 40-page listing at page
 * two). It skips the include/exclude patterns (listing URLs are often not the ones the patterns
 * describe) but not the host rule nor the trap guards, which still bound an endless "next" chain,
 * together with max_pages.
 */
export function findNextPage(doc: Document, rules: CrawlRules, base: URL, pageUrl: string, itemCount: number): string | null {
  const spec = rules.spec;
  let next: string | null = null;
  if (spec.pagination_type === 'next_link' && spec.next_link_selector) {
    const link = selectFirstIn(doc, spec.next_link_selector);
    const href = link ? attributeOf(link, 'href') : undefined;
    next = href ? normaliseUrlOrNull(href, base) : null;
  } else if (spec.pagination_type === 'page_param' && spec.page_param && itemCount > 0) {
    next = incrementPageParam(pageUrl, spec.page_param);
  }
  if (next === null || next === pageUrl) return null;
  if (rules.checkTrap(next)) return null;
  const pageHost = new URL(pageUrl).host;
  return rules.isHostAllowed(new URL(next).host, pageHost) ? next : null;
}

export function incrementPageParam(url: string, param: string): string | null {
  const u = new URL(url);
  const raw = u.searchParams.get(param);
  const current = raw === null || raw === '' ? 1 : Number(raw);
  if (!Number.isSafeInteger(current)) return null;
  u.searchParams.set(param, String(current + 1));
  return normaliseUrlOrNull(u.href);
}
