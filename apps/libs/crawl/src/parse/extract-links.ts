import type { Document } from 'domhandler';
import type { CrawlRules, RuleVerdict } from '../rules/crawl-rules.ts';
import { isNonFetchableHref } from '../rules/href-filter.ts';
import { normaliseUrlOrNull } from '../url/normalise.ts';
import { metaNofollow, relHas } from './page-hints.ts';
import { selectAllIn } from './select.ts';

export interface LinkLimits {
  /** Kept links per page. A page listing more is a sitemap or a bomb; the crawl reaches the rest through other pages. */
  readonly maxLinks: number;
  /** Anchors looked at per page, kept or not, bounding the work on a page of a million anchors. */
  readonly maxAnchors: number;
  /**
   * Time the crawl rules may take on one page. Patterns run in linear time, but a link can still
   * cost its length times the pattern's program; past the budget the page's remaining links are
   * dropped as `over_budget` instead of holding the worker.
   */
  readonly ruleBudgetMs: number;
}

export interface ExtractedLinks {
  /** Normalised, kept by the rules, deduplicated, in document order. */
  readonly links: string[];
  /** How many were dropped, by reason ('invalid' for unparseable/non-http hrefs). */
  readonly dropped: Partial<Record<Exclude<RuleVerdict, null> | 'invalid' | 'capped' | 'over_budget' | 'nofollow', number>>;
}

/**
 * The page's links that the crawl follows. Unless the spec's `follow_nofollow` is set, a link with
 * `rel="nofollow"` is not followed, and neither is any link of a page whose robots meta tag says
 * `nofollow` (or `none`): each counts as dropped `nofollow`. A link that is also found without the
 * mark on the same page is followed (the page links to it plainly too).
 */
export function extractLinks(doc: Document, base: URL, pageUrl: string, rules: CrawlRules, limits: LinkLimits): ExtractedLinks {
  const links: string[] = [];
  const seen = new Set<string>();
  const dropped: Record<string, number> = {};
  const drop = (why: string) => (dropped[why] = (dropped[why] ?? 0) + 1);
  const anchors = selectAllIn(doc, 'a[href], area[href]');
  const honourNofollow = !rules.spec.follow_nofollow;
  if (honourNofollow && anchors.length > 0 && metaNofollow(doc)) return { links, dropped: { nofollow: anchors.length } };
  const n = Math.min(anchors.length, limits.maxAnchors);
  if (anchors.length > n) dropped.capped = anchors.length - n;
  // Marked links are looked at after the plain ones, so that one linked both ways is followed.
  const marked: number[] = [];
  const deadline = performance.now() + limits.ruleBudgetMs;
  let overBudget = false;
  for (let j = 0; j < n + marked.length; j++) {
    const i = j < n ? j : marked[j - n]!;
    if (j < n && honourNofollow && relHas(anchors[i]!.attribs.rel, 'nofollow')) {
      marked.push(i);
      continue;
    }
    const href = anchors[i]!.attribs.href ?? '';
    if (isNonFetchableHref(href)) {
      drop('invalid');
      continue;
    }
    const url = normaliseUrlOrNull(href, base);
    if (url === null) {
      drop('invalid');
      continue;
    }
    if (seen.has(url)) continue;
    seen.add(url);
    if (j >= n) {
      drop('nofollow');
      continue;
    }
    if (overBudget || (overBudget = performance.now() > deadline)) {
      drop('over_budget');
      continue;
    }
    const verdict = rules.check(url, pageUrl);
    if (verdict) {
      drop(verdict);
      continue;
    }
    if (links.length >= limits.maxLinks) {
      drop('capped');
      continue;
    }
    links.push(url);
  }
  return { links, dropped };
}
