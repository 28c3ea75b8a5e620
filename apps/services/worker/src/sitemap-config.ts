import type { SitemapLimits } from '@trawl/crawl';

/**
 * The sitemap limits (TRAWL_SITEMAP_*) with their clock within half the page budget
 * (TRAWL_PAGE_BUDGET_MS): a root's sitemaps are read inside its page's budget, after the page itself,
 * so a budget set lower than the sitemap time cuts the sitemaps short instead of failing the root.
 */
export function clampedSitemapLimits(limits: SitemapLimits, pageBudgetMs: number): SitemapLimits {
  return limits.timeMs <= pageBudgetMs / 2 ? limits : { ...limits, timeMs: Math.floor(pageBudgetMs / 2) };
}
