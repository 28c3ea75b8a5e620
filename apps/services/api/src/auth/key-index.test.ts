import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { IndexedKey } from '../data/api-keys.ts';
import { KeyIndex } from './key-index.ts';

const hash = (name: string) => createHash('sha256').update(name).digest('hex');

/** A key name whose hash satisfies `test` (its shard). */
function nameWhere(test: (hash: string) => boolean): string {
  for (let i = 0; ; i++) if (test(hash(`key-${i}`))) return `key-${i}`;
}

/** A stand-in for `api_keys`: active hashes → owners, read by pages as activeKeysPage does; `beforePage` runs before each read. */
function table(entries: Record<string, string> = {}) {
  const rows = new Map(Object.entries(entries).map(([name, user]) => [hash(name), user]));
  const pages: string[] = [];
  let beforePage: (prefix: string) => void | Promise<void> = () => undefined;
  return {
    rows,
    pages,
    set beforePage(fn: (prefix: string) => void | Promise<void>) {
      beforePage = fn;
    },
    loadPage: async (prefix: string, after: string | null, limit: number): Promise<IndexedKey[]> => {
      await beforePage(prefix);
      pages.push(prefix);
      return [...rows]
        .filter(([h]) => h.startsWith(prefix) && (after === null || h > after))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .slice(0, limit)
        .map(([h, userId]) => ({ hash: h, userId }));
    },
  };
}

describe('KeyIndex', () => {
  it('loads every key, shard by shard and page by page, and knows each owner by hash', async () => {
    const names = Array.from({ length: 200 }, (_, i) => `key-${i}`);
    const db = table(Object.fromEntries(names.map((n, i) => [n, `user-${i % 7}`])));
    const index = new KeyIndex({ loadPage: db.loadPage, pageSize: 4 });
    await index.resync();
    expect(index.size).toBe(200);
    expect(index.resyncs).toBe(1);
    names.forEach((n, i) => expect(index.userOf(hash(n))).toBe(`user-${i % 7}`));
    expect(index.userOf(hash('made-up'))).toBeUndefined();
    expect(index.userOf('not hex at all')).toBeUndefined();
    // 16 shards of ~12 keys in pages of 4: more than one page per shard, none skipped.
    expect(new Set(db.pages).size).toBe(16);
    expect(db.pages.length).toBeGreaterThan(32);
  });

  it('a change heard during a resync wins over what the resync read before it', async () => {
    const db = table({ a: 'alice', b: 'bob' });
    const index = new KeyIndex({ loadPage: db.loadPage });
    await index.resync();
    // Every page of the next resync was read before the changes below were heard.
    const reads: (() => void)[] = [];
    db.beforePage = () => new Promise<void>((resolve) => reads.push(resolve));
    const running = index.resync();
    while (reads.length === 0) await Promise.resolve();
    // The table as the resync's pages will show it: a before its revocation, c before its creation.
    index.apply({ hash: hash('a'), userId: 'alice', active: false });
    index.apply({ hash: hash('c'), userId: 'carol', active: true });
    expect(index.knows(hash('a'))).toBe(false);
    expect(index.userOf(hash('c'))).toBe('carol');
    db.beforePage = () => undefined;
    reads.forEach((read) => read());
    await running;
    expect(index.knows(hash('a'))).toBe(false);
    expect(index.userOf(hash('c'))).toBe('carol');
    expect(index.userOf(hash('b'))).toBe('bob');
  });

  it('a resync asked for while one runs runs once more after it, however many ask', async () => {
    const db = table({ a: 'alice' });
    const index = new KeyIndex({ loadPage: db.loadPage });
    const first = index.resync();
    // Committed while the first resync reads, and announced to no one (the listener was down).
    db.rows.set(hash('late'), 'lena');
    const again = [index.resync(), index.resync(), index.resync()];
    await Promise.all([first, ...again]);
    expect(index.resyncs).toBe(2);
    expect(index.userOf(hash('late'))).toBe('lena');
  });

  it('tells who must end a key\'s streams: a revocation, a deletion, a key given to another user; not a new key', async () => {
    const removed: string[] = [];
    let resynced = 0;
    const db = table({ a: 'alice', b: 'bob' });
    const index = new KeyIndex({ loadPage: db.loadPage, onRemoved: (h) => removed.push(h), onResynced: () => resynced++ });
    await index.resync();
    expect(resynced).toBe(1);
    index.apply({ hash: hash('c'), userId: 'carol', active: true });
    index.apply({ hash: hash('c'), userId: 'carol', active: true });
    index.apply({ hash: hash('a'), userId: 'alice', active: false });
    index.apply({ hash: hash('b'), userId: 'mallory', active: true });
    expect(removed).toEqual([hash('a'), hash('b')]);
    expect(index.userOf(hash('b'))).toBe('mallory');
  });

  it('a failed resync keeps what the index knew, and the next one recovers', async () => {
    // One key in a shard read before the failing one (prefix 8), one in a shard after it.
    const early = nameWhere((h) => h < '8');
    const late = nameWhere((h) => h >= '9');
    const db = table({ [early]: 'eve', [late]: 'larry' });
    const index = new KeyIndex({ loadPage: db.loadPage });
    await index.resync();
    db.rows.clear();
    db.beforePage = (prefix) => {
      if (prefix === '8') throw new Error('connection lost');
    };
    await expect(index.resync()).rejects.toThrow('connection lost');
    expect(index.resyncs).toBe(1);
    // Shards read before the failure are current; the others still hold what they had.
    expect(index.knows(hash(early))).toBe(false);
    expect(index.userOf(hash(late))).toBe('larry');
    db.beforePage = () => undefined;
    await index.resync();
    expect(index.size).toBe(0);
  });
});
