import { describe, expect, it } from 'vitest';
import { itemsDigest, NearDuplicates, nearDuplicateDistanceFromEnv } from './near-duplicates.ts';

const A = '0f0f0f0f0f0f0f0f';
const A_3_BITS_OFF = '0f0f0f0f0f0f0f08'; // 0xf ^ 0x8 = 0x7: three bits
const A_4_BITS_OFF = '0f0f0f0f0f0f0f00';
const NO_ITEMS = itemsDigest([]);

describe('NearDuplicates: a page within the distance of one kept for its job and host', () => {
  it('is marked a near-duplicate of the first such page; its items go when they are the original\'s', () => {
    const index = new NearDuplicates({ maxDistance: 3 });
    expect(index.check('job', 'site', { url: 'http://site/a', simhash: A, items: NO_ITEMS })).toEqual({ of: null, sameItems: false });
    expect(index.check('job', 'site', { url: 'http://site/a?print=1', simhash: A_3_BITS_OFF, items: NO_ITEMS })).toEqual({ of: 'http://site/a', sameItems: true });
    // Past the distance: a page of its own.
    expect(index.check('job', 'site', { url: 'http://site/b', simhash: A_4_BITS_OFF, items: NO_ITEMS }).of).toBeNull();
  });

  it('keeps the items of a near-duplicate that shows other ones (a variant whose price alone differs)', () => {
    const index = new NearDuplicates({ maxDistance: 3 });
    index.check('job', 'site', { url: 'http://site/red', simhash: A, items: itemsDigest([{ fields: { price: '10' } }]) });
    expect(index.check('job', 'site', { url: 'http://site/blue', simhash: A, items: itemsDigest([{ fields: { price: '12' } }]) })).toEqual({ of: 'http://site/red', sameItems: false });
  });

  it('compares pages of one job and host only, and never a page with itself (a retry)', () => {
    const index = new NearDuplicates({ maxDistance: 3 });
    index.check('job', 'site', { url: 'http://site/a', simhash: A, items: NO_ITEMS });
    expect(index.check('other-job', 'site', { url: 'http://site/a2', simhash: A, items: NO_ITEMS }).of).toBeNull();
    expect(index.check('job', 'mirror', { url: 'http://mirror/a', simhash: A, items: NO_ITEMS }).of).toBeNull();
    expect(index.check('job', 'site', { url: 'http://site/a', simhash: A, items: NO_ITEMS }).of).toBeNull();
  });

  it('marks nothing when turned off, and forgets an ended job', () => {
    const off = new NearDuplicates({ maxDistance: -1 });
    off.check('job', 'site', { url: 'http://site/a', simhash: A, items: NO_ITEMS });
    expect(off.check('job', 'site', { url: 'http://site/b', simhash: A, items: NO_ITEMS }).of).toBeNull();
    const index = new NearDuplicates({ maxDistance: 0 });
    index.check('job', 'site', { url: 'http://site/a', simhash: A, items: NO_ITEMS });
    index.forget('job');
    expect(index.check('job', 'site', { url: 'http://site/b', simhash: A, items: NO_ITEMS }).of).toBeNull();
  });

  it('stays within its bounds: pages per host and groups', () => {
    const index = new NearDuplicates({ maxDistance: 0, maxPagesPerHost: 2, maxGroups: 2 });
    index.check('job', 'site', { url: 'http://site/1', simhash: '0000000000000001', items: NO_ITEMS });
    index.check('job', 'site', { url: 'http://site/2', simhash: '0000000000000002', items: NO_ITEMS });
    index.check('job', 'site', { url: 'http://site/3', simhash: '0000000000000004', items: NO_ITEMS });
    // The third was compared but not kept.
    expect(index.check('job', 'site', { url: 'http://site/3b', simhash: '0000000000000004', items: NO_ITEMS }).of).toBeNull();
    expect(index.check('job', 'site', { url: 'http://site/1b', simhash: '0000000000000001', items: NO_ITEMS }).of).toBe('http://site/1');
    index.check('job2', 'site', { url: 'http://site/x', simhash: A, items: NO_ITEMS });
    index.check('job3', 'site', { url: 'http://site/y', simhash: A, items: NO_ITEMS });
    // Three groups for two places: the least recently used (job) went.
    expect(index.check('job', 'site', { url: 'http://site/1c', simhash: '0000000000000001', items: NO_ITEMS }).of).toBeNull();
  });

  it('keeps at most maxPages hashes in all, dropping the least recently used groups', () => {
    const index = new NearDuplicates({ maxDistance: 0, maxPages: 3 });
    index.check('a', 'site', { url: 'http://site/a1', simhash: '0000000000000001', items: NO_ITEMS });
    index.check('a', 'site', { url: 'http://site/a2', simhash: '0000000000000002', items: NO_ITEMS });
    index.check('b', 'site', { url: 'http://site/b1', simhash: '0000000000000001', items: NO_ITEMS });
    index.check('b', 'site', { url: 'http://site/b2', simhash: '0000000000000002', items: NO_ITEMS });
    // Four hashes for three places: job a's group went, job b's stays.
    expect(index.check('b', 'site', { url: 'http://site/b3', simhash: '0000000000000001', items: NO_ITEMS }).of).toBe('http://site/b1');
    expect(index.check('a', 'site', { url: 'http://site/a3', simhash: '0000000000000001', items: NO_ITEMS }).of).toBeNull();
  });

  it('reads TRAWL_NEAR_DUPLICATE_DISTANCE', () => {
    expect(nearDuplicateDistanceFromEnv({})).toBe(3);
    expect(nearDuplicateDistanceFromEnv({ TRAWL_NEAR_DUPLICATE_DISTANCE: '0' })).toBe(0);
    expect(nearDuplicateDistanceFromEnv({ TRAWL_NEAR_DUPLICATE_DISTANCE: 'off' })).toBe(-1);
    expect(() => nearDuplicateDistanceFromEnv({ TRAWL_NEAR_DUPLICATE_DISTANCE: '65' })).toThrow(RangeError);
  });
});
