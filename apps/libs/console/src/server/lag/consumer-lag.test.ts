import { describe, expect, it } from 'vitest';
import { isTrawlGroup, lagOf } from './consumer-lag.ts';

describe('consumer lag', () => {
  const highs = new Map([['t', new Map([[0, 100n], [1, 50n]])]]);
  const lows = new Map([['t', new Map([[0, 10n], [1, 0n]])]]);

  it('is the high watermark minus the committed offset, summed over partitions', () => {
    expect(lagOf([{ topic: 't', partitions: [{ partition: 0, offset: '90' }, { partition: 1, offset: '50' }] }], highs, lows)).toEqual([{ topic: 't', lag: 10, partitions: 2 }]);
  });

  it('counts a partition without a commit from the start of the log', () => {
    expect(lagOf([{ topic: 't', partitions: [{ partition: 0, offset: '-1' }, { partition: 1, offset: '40' }] }], highs, lows)).toEqual([{ topic: 't', lag: 100, partitions: 2 }]);
  });

  it('leaves out topics the group has never committed on', () => {
    expect(lagOf([{ topic: 't', partitions: [{ partition: 0, offset: '-1' }, { partition: 1, offset: '-1' }] }], highs, lows)).toEqual([]);
  });
});

describe('which groups are measured', () => {
  it("Trawl's own, in or out of the topic namespace, never throw-away ones", () => {
    expect(isTrawlGroup('trawl-worker', '')).toBe(true);
    expect(isTrawlGroup('e2eab.trawl-frontier', 'e2eab.')).toBe(true);
    expect(isTrawlGroup('trawl-projection-ch-v1', 'e2eab.')).toBe(true);
    expect(isTrawlGroup('trawl-reader-0b6f3c1e-8d2a-4c4e-9d7a-2f1e5b6c7d8e', '')).toBe(false);
    expect(isTrawlGroup('trawl-api-feed-0b6f3c1e-8d2a-4c4e-9d7a-2f1e5b6c7d8e', '')).toBe(false);
    expect(isTrawlGroup('someone-else', '')).toBe(false);
  });
});
