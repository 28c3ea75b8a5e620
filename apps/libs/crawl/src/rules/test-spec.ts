import type { CrawlSpec } from '@trawl/schemas';

/** A permissive spec for tests; override what the test is about. */
export function testSpec(overrides: Partial<CrawlSpec> = {}): CrawlSpec {
  return {
    website_id: null,
    website_name: null,
    requires_browser: false,
    pagination_type: 'none',
    next_link_selector: null,
    page_param: null,
    max_depth: 3,
    max_pages: 1000,
    same_host: true,
    allowed_hosts: [],
    include_patterns: [],
    exclude_patterns: [],
    host_concurrency: 8,
    host_delay_ms: 0,
    item_root: null,
    item_fields: [],
    formats: [],
    max_age: null,
    ignore_cache: false,
    store_in_cache: false,
    sitemap: 'include',
    headers: {},
    user_agent: null,
    locale: null,
    cookies: {},
    ...overrides,
  };
}
