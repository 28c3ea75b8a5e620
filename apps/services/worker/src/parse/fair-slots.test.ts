import { describe, expect, it } from 'vitest';
import { FairSlots } from './fair-slots.ts';

/** Work that ends when told: what ran, in order, and a way to end each. */
function harness(slots: number) {
  const fair = new FairSlots<string>(slots);
  const started: string[] = [];
  const enders = new Map<string, () => void>();
  const submit = (key: string, name: string, signal?: AbortSignal) =>
    fair.run(key, () => {
      started.push(name);
      return new Promise<string>((resolve) => enders.set(name, () => resolve(name)));
    }, signal);
  const end = async (name: string) => {
    enders.get(name)!();
    // Let the slot's release and the next start run.
    await new Promise((r) => setImmediate(r));
  };
  return { fair, started, submit, end };
}

describe('FairSlots', () => {
  it('runs at most `slots` at once and starts the rest as slots free', async () => {
    const { fair, started, submit, end } = harness(2);
    const done = ['a1', 'a2', 'a3'].map((n) => submit('a', n));
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a1', 'a2']);
    expect([fair.busy, fair.queued]).toEqual([2, 1]);
    await end('a1');
    expect(started).toEqual(['a1', 'a2', 'a3']);
    await end('a2');
    await end('a3');
    expect(await Promise.all(done)).toEqual(['a1', 'a2', 'a3']);
    expect([fair.busy, fair.queued]).toEqual([0, 0]);
  });

  it('a key with one waiting piece of work goes before the backlog of a key that came first', async () => {
    const { started, submit, end } = harness(1);
    submit('big', 'big0');
    for (let i = 1; i <= 5; i++) submit('big', `big${i}`);
    submit('small', 'small0');
    await new Promise((r) => setImmediate(r));
    await end('big0');
    await end('big1');
    // big1 ran after big0 (big was first in line), then small0, not big2..big5.
    expect(started).toEqual(['big0', 'big1', 'small0']);
  });

  it('alternates between keys while both wait', async () => {
    const { started, submit, end } = harness(1);
    submit('x', 'hold');
    for (let i = 0; i < 3; i++) submit('a', `a${i}`);
    for (let i = 0; i < 3; i++) submit('b', `b${i}`);
    await new Promise((r) => setImmediate(r));
    for (const name of ['hold', 'a0', 'b0', 'a1', 'b1', 'a2']) await end(name);
    expect(started).toEqual(['hold', 'a0', 'b0', 'a1', 'b1', 'a2', 'b2']);
  });

  it('work whose signal aborts while waiting leaves the line and never starts', async () => {
    const { fair, started, submit, end } = harness(1);
    submit('a', 'a0');
    const abort = new AbortController();
    const waiting = submit('b', 'b0', abort.signal);
    abort.abort(new Error('budget over'));
    await expect(waiting).rejects.toThrow('budget over');
    expect(fair.queued).toBe(0);
    await end('a0');
    expect(started).toEqual(['a0']);
    expect(fair.busy).toBe(0);
  });

  it('work that detaches frees its slot for others while it runs, up to maxDetached at once', async () => {
    const fair = new FairSlots<string>(1, 1);
    const started: string[] = [];
    const enders: (() => void)[] = [];
    const leases: { detach(): boolean }[] = [];
    const submit = (key: string, name: string) =>
      fair.run(key, (lease) => {
        started.push(name);
        leases.push(lease);
        return new Promise<void>((resolve) => enders.push(resolve));
      });
    const tick = () => new Promise((r) => setImmediate(r));
    submit('slow', 'slow0');
    submit('slow', 'slow1');
    submit('fast', 'fast0');
    await tick();
    expect(started).toEqual(['slow0']);
    expect(leases[0]!.detach()).toBe(true);
    await tick();
    // fast0's turn comes first (slow was served last); the detached slow0 goes on beside it.
    expect(started).toEqual(['slow0', 'fast0']);
    expect(fair.busy).toBe(2);
    // A second detach is refused while one is out: the slot stays held.
    expect(leases[1]!.detach()).toBe(false);
    enders[1]!();
    await tick();
    expect(started).toEqual(['slow0', 'fast0', 'slow1']);
    // The detached work ending frees no slot (it holds none): still one running.
    enders[0]!();
    await tick();
    expect(fair.busy).toBe(1);
  });

  it('frees the slot of work that fails', async () => {
    const fair = new FairSlots<string>(1);
    await expect(fair.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await fair.run('a', async () => 'next')).toBe('next');
  });
});
