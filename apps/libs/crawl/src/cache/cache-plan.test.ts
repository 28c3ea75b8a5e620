import { describe, expect, it } from 'vitest';
import type { CachedPage } from '@trawl/schemas';
import { isFresh, planCacheUse } from './cache-plan.ts';

const NOW = Date.UTC(2026, 10, 21, 12);
const entry = (over: Partial<CachedPage> = {}): CachedPage => ({
  content_hash: 'a'.repeat(64),
  fetched_at: new Date(NOW - 60_000),
  final_url: 'https://shop.example/p/1',
  status: 200,
  content_type: 'text/html',
  etag: '"v1"',
  last_modified: 'Sat, 21 Nov 2026 11:00:00 GMT',
  ...over,
});
const spec = (over: Partial<{ max_age: number | null; ignore_cache: boolean; requires_browser: boolean }> = {}) => ({ max_age: null, ignore_cache: false, requires_browser: false, ...over });

describe('planCacheUse', () => {
  it('given no entry, fetches in full', () => {
    expect(planCacheUse({ cached: null, spec: spec({ max_age: 3600 }), now: NOW })).toEqual({ use: 'none', reason: 'no entry' });
  });

  it('given an entry fetched within max_age, reuses it without a request', () => {
    expect(planCacheUse({ cached: entry(), spec: spec({ max_age: 60 }), now: NOW })).toEqual({ use: 'reuse', entry: entry(), ageMs: 60_000 });
  });

  it('given an entry older than max_age, revalidates it with both validators', () => {
    expect(planCacheUse({ cached: entry(), spec: spec({ max_age: 59 }), now: NOW })).toEqual({
      use: 'revalidate',
      entry: entry(),
      headers: { 'if-none-match': '"v1"', 'if-modified-since': 'Sat, 21 Nov 2026 11:00:00 GMT' },
    });
  });

  it('given no max_age, always asks the site', () => {
    expect(planCacheUse({ cached: entry({ fetched_at: new Date(NOW) }), spec: spec(), now: NOW }).use).toBe('revalidate');
    expect(planCacheUse({ cached: entry({ fetched_at: new Date(NOW) }), spec: spec({ max_age: 0 }), now: NOW }).use).toBe('revalidate');
  });

  it('given a stale entry without validators, fetches in full (nothing to ask with)', () => {
    expect(planCacheUse({ cached: entry({ etag: null, last_modified: null }), spec: spec(), now: NOW })).toEqual({ use: 'none', reason: 'no validator' });
    // …but a fresh one is reused all the same: max_age needs no validator.
    expect(planCacheUse({ cached: entry({ etag: null, last_modified: null }), spec: spec({ max_age: 120 }), now: NOW }).use).toBe('reuse');
  });

  it('given ignore_cache, bypasses both reuse and revalidation', () => {
    expect(planCacheUse({ cached: entry(), spec: spec({ max_age: 3600, ignore_cache: true }), now: NOW })).toEqual({ use: 'none', reason: 'ignore_cache' });
  });

  it('given a browser-rendered job, never serves from the cache', () => {
    expect(planCacheUse({ cached: entry(), spec: spec({ max_age: 3600, requires_browser: true }), now: NOW })).toEqual({ use: 'none', reason: 'browser' });
  });

  it('given an entry from the future (clock skew), counts it as just fetched', () => {
    expect(planCacheUse({ cached: entry({ fetched_at: new Date(NOW + 5_000) }), spec: spec({ max_age: 1 }), now: NOW })).toMatchObject({ use: 'reuse', ageMs: 0 });
  });
});

describe('isFresh', () => {
  it('is inclusive at max_age and never fresh without one', () => {
    expect(isFresh(10_000, 10)).toBe(true);
    expect(isFresh(10_001, 10)).toBe(false);
    expect(isFresh(0, null)).toBe(false);
    expect(isFresh(0, 0)).toBe(false);
  });
});
