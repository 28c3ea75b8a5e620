import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../errors.ts';
import { DEFAULT_SITEMAP_LIMITS, sitemapLimitsFromEnv } from './sitemap-limits.ts';

describe('sitemap limits from the environment', () => {
  it('takes the defaults for what is unset, and the values given', () => {
    expect(sitemapLimitsFromEnv({})).toEqual(DEFAULT_SITEMAP_LIMITS);
    expect(sitemapLimitsFromEnv({ TRAWL_SITEMAP_MAX_URLS: '0', TRAWL_SITEMAP_MAX_BYTES: '4096', TRAWL_SITEMAP_MAX_DEPTH: '0', TRAWL_SITEMAP_MAX_DOCUMENTS: '1', TRAWL_SITEMAP_TIME_MS: '5000' })).toEqual({ maxUrls: 0, maxBytes: 4096, maxDepth: 0, maxDocuments: 1, timeMs: 5000 });
  });

  it('refuses a value that is not a whole number in range, naming the variable', () => {
    for (const [name, value] of [['TRAWL_SITEMAP_MAX_URLS', '-1'], ['TRAWL_SITEMAP_MAX_BYTES', '10'], ['TRAWL_SITEMAP_MAX_DOCUMENTS', '0'], ['TRAWL_SITEMAP_TIME_MS', '1.5e3x']] as const) {
      expect(() => sitemapLimitsFromEnv({ [name]: value })).toThrow(InvalidConfigError);
      expect(() => sitemapLimitsFromEnv({ [name]: value })).toThrow(name);
    }
  });
});
