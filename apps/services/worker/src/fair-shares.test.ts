import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FairShares } from './fair-shares.ts';

/**
 * Given → when → then on a fake clock: work that ends when the test says, started in its key's share.
 */
describe('FairShares', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function harness(slots: number, holdMs = 2_000) {
    const fair = new FairShares<string>(slots, { holdMs, now: () => Date.now() });
    const started: string[] = [];
    const enders = new Map<string, () => void>();
    const submit = (key: string, name: string, signal?: AbortSignal) =>
      fair.run(key, () => {
        started.push(name);
        return new Promise<string>((resolve) => enders.set(name, () => resolve(name)));
      }, signal);
    const settle = () => vi.advanceTimersByTimeAsync(0);
    const end = async (name: string) => {
      enders.get(name)!();
      await settle();
    };
    const backlog = (key: string, n: number) => Array.from({ length: n }, (_, i) => void submit(key, `${key}${i}`).catch(() => {}));
    return { fair, started, submit, end, settle, backlog };
  }

  it('a key alone uses every slot', async () => {
    const { fair, started, settle, backlog } = harness(4);
    backlog('big', 10);
    await settle();
    expect(started).toEqual(['big0', 'big1', 'big2', 'big3']);
    expect([fair.busy, fair.queued]).toEqual([4, 6]);
  });

  it("a freed slot goes to another key's one piece of work, ahead of the first key's backlog", async () => {
    // given: every slot held by a big backlog
    const { started, submit, end, settle, backlog } = harness(4);
    backlog('big', 10);
    await settle();
    // when: one piece of a small key arrives, and one big piece ends
    void submit('small', 'small0');
    await settle();
    expect(started).not.toContain('small0');
    await end('big0');
    // then: the small piece runs, not big4
    expect(started.slice(4)).toEqual(['small0']);
  });

  it('a key between two pieces keeps room for its next for holdMs: the big backlog does not take it back', async () => {
    // given: a small key that ran one piece beside a big backlog
    const { fair, started, submit, end, settle, backlog } = harness(4);
    backlog('big', 10);
    await settle();
    void submit('small', 'small0');
    await end('big0');
    // when: its piece ends and a big one too
    await end('small0');
    await end('big1');
    // then: big holds 3 (its share is the slots less the small key's demand), one slot stays free
    expect(started.filter((n) => n.startsWith('big'))).toHaveLength(5);
    expect(fair.busy).toBe(3);
    // and the small key's next piece, coming a round trip later, starts at once
    await vi.advanceTimersByTimeAsync(500);
    void submit('small', 'small1');
    await settle();
    expect(started.at(-1)).toBe('small1');
    await end('small1');
    // once it has been idle for holdMs, its claim lapses and the backlog takes the slot
    await vi.advanceTimersByTimeAsync(2_000);
    expect(fair.busy).toBe(4);
    expect(fair.shares().has('small')).toBe(false);
  });

  it('splits the slots max-min fair over what each key asks for', async () => {
    const { fair, submit, settle, backlog } = harness(10);
    void submit('one', 'one0');
    backlog('two', 2);
    backlog('many', 100);
    await settle();
    expect(Object.fromEntries(fair.shares())).toEqual({ one: 1, two: 2, many: 7 });
    backlog('other', 100);
    await settle();
    expect(Object.fromEntries(fair.shares())).toEqual({ one: 1, two: 2, many: 3.5, other: 3.5 });
  });

  it('work whose signal aborts while waiting leaves the line and never starts', async () => {
    const { fair, started, submit, end, settle } = harness(1);
    void submit('a', 'a0');
    const abort = new AbortController();
    const waiting = submit('b', 'b0', abort.signal);
    await settle();
    abort.abort(new Error('partition revoked'));
    await expect(waiting).rejects.toThrow('partition revoked');
    expect(fair.queued).toBe(0);
    await end('a0');
    expect(started).toEqual(['a0']);
    expect(fair.busy).toBe(0);
  });

  it('frees the slot of work that fails', async () => {
    const fair = new FairShares<string>(1);
    await expect(fair.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await fair.run('a', async () => 'next')).toBe('next');
  });
});
