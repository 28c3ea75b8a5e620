import { describe, expect, it } from 'vitest';
import { itemIndexOf, itemKey } from './item-key.ts';

const url = 'https://shop.example/list';

describe('itemIndexOf', () => {
  it('finds the index a key was made with, whatever the order of the fields', () => {
    for (const i of [0, 1, 7, 999]) expect(itemIndexOf(url, { b: '2', a: '1' }, itemKey(url, i, { a: '1', b: '2' }))).toBe(i);
  });

  it('is null for a key of other fields, another page, or an index past the bound', () => {
    const key = itemKey(url, 3, { title: 'Rust engineer' });
    expect(itemIndexOf(url, { title: 'Rust engineer (cut' }, key)).toBeNull();
    expect(itemIndexOf(`${url}?page=2`, { title: 'Rust engineer' }, key)).toBeNull();
    expect(itemIndexOf(url, { title: 'Rust engineer' }, key, 3)).toBeNull();
  });
});
