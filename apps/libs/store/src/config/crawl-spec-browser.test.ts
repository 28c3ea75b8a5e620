import { describe, expect, it } from 'vitest';
import { crawlSpec } from './crawl-spec.ts';

describe('crawlSpec and the browser', () => {
  it('renders a spec with actions, a scrolled or load-more list, a screenshot or a PDF', () => {
    expect(crawlSpec(null).requires_browser).toBe(false);
    expect(crawlSpec(null, { formats: ['markdown'] }).requires_browser).toBe(false);
    expect(crawlSpec(null, { formats: ['markdown', 'pdf'] }).requires_browser).toBe(true);
    expect(crawlSpec(null, { formats: ['screenshot'] }).requires_browser).toBe(true);
    const wait = { type: 'wait' as const, selector: null, text: null, key: null, ms: 10, times: null, full_page: false };
    expect(crawlSpec(null, { request: [{ actions: [wait] }] }).requires_browser).toBe(true);
  });
});
