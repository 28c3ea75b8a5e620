import { describe, expect, it } from 'vitest';
import { httpCacheEnabled } from './http-cache-config.ts';

describe('TRAWL_HTTP_CACHE', () => {
  it('is on unless set off, and refuses anything else by name', () => {
    expect(httpCacheEnabled({})).toBe(true);
    expect(httpCacheEnabled({ TRAWL_HTTP_CACHE: 'ON' })).toBe(true);
    expect(httpCacheEnabled({ TRAWL_HTTP_CACHE: ' off ' })).toBe(false);
    expect(() => httpCacheEnabled({ TRAWL_HTTP_CACHE: 'yes' })).toThrow(/TRAWL_HTTP_CACHE must be "on" or "off", got "yes"/);
  });
});
