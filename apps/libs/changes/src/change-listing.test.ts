import { describe, expect, it } from 'vitest';
import { ChangeListing } from './change-listing.ts';

type Kind = 'a' | 'b';
const entry = (kind: Kind, n: number, size = 10) => ({ kind, n, size });

describe('ChangeListing', () => {
  it('given more entries than the limit, counts them all and lists the first `limit` of each kind', () => {
    const listing = new ChangeListing<Kind, ReturnType<typeof entry>>(['a', 'b'], { limit: 2, maxListBytes: 1_000 }, (e) => e.size);
    for (let n = 0; n < 5; n++) listing.add(entry('a', n));
    listing.add(entry('b', 0));
    const { counts, lists } = listing.result();
    expect(counts).toEqual({ a: 5, b: 1 });
    expect(lists.a.map((e) => e.n)).toEqual([0, 1]);
    expect(lists.b.map((e) => e.n)).toEqual([0]);
    expect(listing.truncated).toBe(true);
  });

  it('cuts a list at its bytes, and lists nothing after the first entry that does not fit, so a list stays a prefix', () => {
    const listing = new ChangeListing<Kind, ReturnType<typeof entry>>(['a', 'b'], { limit: 100, maxListBytes: 25 }, (e) => e.size);
    listing.add(entry('a', 0, 10));
    listing.add(entry('a', 1, 20)); // 30 > 25: cut here
    listing.add(entry('a', 2, 1)); // would fit, but follows a cut entry
    expect(listing.result().lists.a.map((e) => e.n)).toEqual([0]);
    expect(listing.result().counts.a).toBe(3);
    expect(listing.listing('a')).toBe(false);
    listing.countOnly('a', 7);
    expect(listing.result().counts).toEqual({ a: 10, b: 0 });
  });

  it('is not truncated when every entry is listed, and refuses to count without listing a kind that is still listed', () => {
    const listing = new ChangeListing<Kind, ReturnType<typeof entry>>(['a', 'b'], { limit: 2, maxListBytes: 1_000 }, (e) => e.size);
    listing.add(entry('a', 0));
    listing.add(entry('a', 1));
    expect(listing.truncated).toBe(false);
    expect(() => listing.countOnly('b', 1)).toThrow(/still listed/);
  });
});
