import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyWatch } from './key-watch.ts';

/** A stand-in for the api_keys table: the set of good hashes, and the queries asked of it. */
function keys(...good: string[]) {
  const table = new Set(good);
  const queries: string[][] = [];
  return {
    table,
    queries,
    stillGood: async (hashes: readonly string[]) => {
      queries.push([...hashes]);
      return new Set(hashes.filter((h) => table.has(h)));
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('KeyWatch', () => {
  it("ends the streams of a key found revoked, once each, and no one else's", async () => {
    const db = keys('a', 'b');
    const dropped: string[] = [];
    const watch = new KeyWatch({ everyMs: 60_000, stillGood: db.stillGood, onRevoked: (h) => dropped.push(h) });
    const ended: string[] = [];
    watch.watch('a', () => ended.push('a1'));
    watch.watch('a', () => ended.push('a2'));
    watch.watch('b', () => ended.push('b1'));
    await watch.check();
    expect(ended).toEqual([]);
    db.table.delete('a');
    await watch.check();
    await watch.check();
    expect(ended).toEqual(['a1', 'a2']);
    expect(dropped).toEqual(['a']);
    expect(watch.size).toBe(1);
    watch.close();
  });

  it('asks for every watched key in one query per round, however many streams', async () => {
    const db = keys(...Array.from({ length: 50 }, (_, i) => `k${i}`));
    const watch = new KeyWatch({ everyMs: 60_000, stillGood: db.stillGood });
    for (let i = 0; i < 50; i++) for (let s = 0; s < 4; s++) watch.watch(`k${i}`, () => undefined);
    await Promise.all([watch.check(), watch.check(), watch.check()]);
    expect(db.queries).toHaveLength(1);
    expect(db.queries[0]).toHaveLength(50);
    watch.close();
  });

  it('looks every everyMs while a stream is open, and not at all once none is', async () => {
    vi.useFakeTimers();
    const db = keys('a');
    const watch = new KeyWatch({ everyMs: 500, stillGood: db.stillGood });
    const ended: string[] = [];
    const unwatch = watch.watch('a', () => ended.push('a'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(db.queries).toHaveLength(2);
    db.table.delete('a');
    await vi.advanceTimersByTimeAsync(500);
    expect(ended).toEqual(['a']);
    unwatch();
    const quiet = db.queries.length;
    const other = watch.watch('b', () => undefined);
    other();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(db.queries).toHaveLength(quiet);
    watch.close();
  });

  it('a key a request found revoked ends its streams at once', () => {
    const db = keys('a');
    const watch = new KeyWatch({ everyMs: 60_000, stillGood: db.stillGood });
    const ended: string[] = [];
    watch.watch('a', () => ended.push('a'));
    watch.revoked('a');
    watch.revoked('a');
    expect(ended).toEqual(['a']);
    expect(db.queries).toEqual([]);
    watch.close();
  });

  it('a stream that ended stops being watched; a failed round ends nothing', async () => {
    const errors: unknown[] = [];
    let down = true;
    const watch = new KeyWatch({
      everyMs: 60_000,
      stillGood: async () => {
        if (down) throw new Error('connect ECONNREFUSED');
        return new Set<string>();
      },
      onError: (err) => errors.push(err),
    });
    const ended: string[] = [];
    const stop = watch.watch('a', () => ended.push('a'));
    watch.watch('b', () => ended.push('b'));
    await watch.check();
    expect(ended).toEqual([]);
    expect(errors).toHaveLength(1);
    stop();
    down = false;
    await watch.check();
    expect(ended).toEqual(['b']);
    watch.close();
  });
});
