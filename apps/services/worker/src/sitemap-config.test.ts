import { DEFAULT_SITEMAP_LIMITS } from '@trawl/crawl';
import { describe, expect, it } from 'vitest';
import { clampedSitemapLimits } from './sitemap-config.ts';

describe('sitemap limits within the page budget', () => {
  it('keeps the time when it fits in half the budget, else takes half the budget', () => {
    expect(clampedSitemapLimits(DEFAULT_SITEMAP_LIMITS, 90_000)).toBe(DEFAULT_SITEMAP_LIMITS);
    expect(clampedSitemapLimits(DEFAULT_SITEMAP_LIMITS, 20_000)).toEqual({ ...DEFAULT_SITEMAP_LIMITS, timeMs: 10_000 });
  });
});
