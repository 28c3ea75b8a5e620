import { describe, expect, it } from 'vitest';
import { itemKey } from '@trawl/crawl';
import { compareItems, type RunItem } from './compare-items.ts';

const item = (url: string, index: number, fields: Record<string, string>): RunItem => ({ item_key: itemKey(url, index, fields), url, fields });
const LIST = 'https://s.example/list';
const GONE = 'https://s.example/gone';

describe('compareItems', () => {
  it('given items by page and position: same key unchanged, same position with other fields changed, the rest new or removed', () => {
    const before = [item(LIST, 0, { t: 'A' }), item(LIST, 1, { t: 'B' }), item(GONE, 0, { t: 'C' })];
    const now = [item(LIST, 0, { t: 'A' }), item(LIST, 1, { t: 'B2' }), item(LIST, 2, { t: 'X' })];
    const { changes, unchanged } = compareItems(before, now);
    expect(unchanged).toBe(1);
    expect(changes).toEqual([
      { kind: 'removed', url: GONE, index: 0, item_key: null, fields: null, previous_item_key: before[2]!.item_key, previous_fields: { t: 'C' } },
      { kind: 'changed', url: LIST, index: 1, item_key: now[1]!.item_key, fields: { t: 'B2' }, previous_item_key: before[1]!.item_key, previous_fields: { t: 'B' } },
      { kind: 'new', url: LIST, index: 2, item_key: now[2]!.item_key, fields: { t: 'X' }, previous_item_key: null, previous_fields: null },
    ]);
  });

  it('an item inserted at the top of a page changes every item below it (the key holds the position)', () => {
    const before = [item(LIST, 0, { t: 'A' }), item(LIST, 1, { t: 'B' })];
    const now = [item(LIST, 0, { t: 'N' }), item(LIST, 1, { t: 'A' }), item(LIST, 2, { t: 'B' })];
    const { changes, unchanged } = compareItems(before, now);
    expect(unchanged).toBe(0);
    expect(changes.map((c) => [c.kind, c.index])).toEqual([['changed', 0], ['changed', 1], ['new', 2]]);
  });

  it('an item whose position cannot be recovered (fields cut after its key was made) is new or removed, never changed', () => {
    const cut: RunItem = { item_key: itemKey(LIST, 0, { t: 'a long title' }), url: LIST, fields: { t: 'a long' } };
    const { changes } = compareItems([item(LIST, 0, { t: 'old' })], [cut]);
    expect(changes.map((c) => [c.kind, c.index])).toEqual([['removed', 0], ['new', null]]);
  });

  it('the same runs compared twice, in any row order, give one answer', () => {
    const before = [item(LIST, 0, { t: 'A' }), item(LIST, 1, { t: 'B' }), item(GONE, 0, { t: 'C' })];
    const now = [item(LIST, 1, { t: 'B2' }), item(LIST, 2, { t: 'X' }), item(LIST, 0, { t: 'A' })];
    expect(compareItems([...before].reverse(), [...now].reverse())).toEqual(compareItems(before, now));
  });
});
