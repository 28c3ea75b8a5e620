import { describe, expect, it } from 'vitest';
import { jsonDifferences } from './json-differences.ts';

describe('jsonDifferences', () => {
  it('names each path that differs, is new or is gone', () => {
    const before = { a: { b: 1, c: [1, 2] }, d: 'x' };
    const after = { a: { b: 2, c: [1, 2] }, e: 'y' };
    expect(jsonDifferences(before, after)).toEqual(['a.b', 'd (gone)', 'e (new)']);
  });

  it('finds nothing in equal values, and stops at the limit', () => {
    expect(jsonDifferences({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toEqual([]);
    expect(jsonDifferences({ a: 1, b: 1, c: 1 }, { a: 2, b: 2, c: 2 }, 2)).toEqual(['a', 'b']);
  });
});
