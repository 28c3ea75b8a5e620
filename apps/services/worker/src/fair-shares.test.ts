import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FairShares, type FairTurn, type SlotLease } from './fair-shares.ts';

const turn = (key: string): FairTurn => {
  const [tenant, job] = key.split('/');
  return { tenant: tenant!, job: job ?? tenant! };
};

/**
 * Given → when → then on a fake clock: work that ends when the test says, started in its tenant's
 * share. `key` names a tenant whose work is one job of its own; `tenant/job` a tenant's job.
 */
describe('FairShares', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function harness(slots: number, holdMs = 2_000, maxDetached = 0) {
    const fair = new FairShares(slots, { holdMs, maxDetached, now: () => Date.now() });
    const started: string[] = [];
    const enders = new Map<string, () => void>();
    const leases = new Map<string, SlotLease>();
    const submit = (key: string, name: string, signal?: AbortSignal) =>
      fair.run(turn(key), (lease) => {
        started.push(name);
        leases.set(name, lease);
        return new Promise<string>((resolve) => enders.set(name, () => resolve(name)));
      }, signal);
    const settle = () => vi.advanceTimersByTimeAsync(0);
    const end = async (name: string) => {
      enders.get(name)!();
      await settle();
    };
    const backlog = (key: string, n: number) => Array.from({ length: n }, (_, i) => void submit(key, `${key}${i}`).catch(() => {}));
    return { fair, started, submit, end, settle, backlog, leases };
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

  it("work stepped aside leaves its tenant's claim: another tenant takes every slot it frees", async () => {
    // given: two slots, a user's three slow pieces (two running) and another user's backlog
    const { started, settle, backlog, leases } = harness(2, 2_000, 4);
    backlog('hostile', 3);
    backlog('by', 6);
    await settle();
    expect(started).toEqual(['hostile0', 'hostile1']);
    // when: both step aside
    leases.get('hostile0')!.detach();
    await settle();
    leases.get('hostile1')!.detach();
    await settle();
    // then: the other user runs in both slots (its demand against the third piece's), not in one beside an idle slot
    expect(started.filter((n) => n.startsWith('by'))).toHaveLength(1);
    leases.get('hostile2')?.detach();
    await settle();
    expect(started.filter((n) => n.startsWith('by'))).toHaveLength(2);
  });

  it('frees the slot of work that fails', async () => {
    const fair = new FairShares(1);
    await expect(fair.run(turn('a'), async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await fair.run(turn('a'), async () => 'next')).toBe('next');
  });

  it("shares go to tenants, not jobs: a user's many jobs get one user's share", async () => {
    // given: one user with 50 jobs of 10 pieces each, another with one job of 10
    const { fair, started, end, settle, backlog } = harness(10);
    for (let j = 0; j < 50; j++) backlog(`many/j${j}`, 10);
    backlog('one/only', 10);
    await settle();
    // then: an even split between the two users, whatever their job counts
    expect(Object.fromEntries(fair.shares())).toEqual({ many: 5, one: 5 });
    // when: the 10 pieces the first user started alone end
    for (let i = 0; i < 10; i++) await end(`many/j0${i}`);
    // then: half the slots go to the other user, the rest round the first user's other jobs
    expect(started.slice(10).filter((n) => n.startsWith('one/'))).toHaveLength(5);
    expect(started.slice(10).filter((n) => n.startsWith('many/')).sort()).toEqual(['many/j10', 'many/j20', 'many/j30', 'many/j40', 'many/j50']);
  });

  it("within a tenant, its jobs take turns: one job's backlog does not hold back another's piece", async () => {
    const { started, submit, end, settle, backlog } = harness(1);
    backlog('u/big', 5);
    await settle();
    void submit('u/small', 'small0');
    await end('u/big0');
    expect(started).toEqual(['u/big0', 'small0']);
  });

  it('alternates between tenants while both wait', async () => {
    const { started, end, settle, backlog } = harness(1, 0);
    backlog('a', 3);
    backlog('b', 3);
    await settle();
    for (const name of ['a0', 'b0', 'a1', 'b1', 'a2']) await end(name);
    expect(started).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2']);
  });

  it('work that detaches frees its slot for others while it runs, up to maxDetached at once', async () => {
    const { fair, started, end, settle, backlog, leases } = harness(1, 2_000, 1);
    backlog('slow', 2);
    backlog('fast', 2);
    await settle();
    expect(started).toEqual(['slow0']);
    expect(leases.get('slow0')!.detach()).toBe(true);
    await settle();
    // fast0 takes the freed slot; slow0 goes on beside it, holding none
    expect(started).toEqual(['slow0', 'fast0']);
    expect(fair.busy).toBe(2);
    // a second detach is refused while one is out: the slot stays held
    expect(leases.get('fast0')!.detach()).toBe(false);
    await end('fast0');
    expect(started).toEqual(['slow0', 'fast0', 'fast1']);
    await end('fast1');
    // the detached work ending frees no slot (it holds none)
    await end('slow0');
    expect(started).toEqual(['slow0', 'fast0', 'fast1', 'slow1']);
    expect(fair.busy).toBe(1);
  });
});
