import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BudgetExceededError } from '../errors.ts';
import { WorkBudget } from './work-budget.ts';

const never = new Promise<never>(() => {});

/** A full collection, exposed for this test file only. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('WorkBudget', () => {
  it("gives the work's result and lets go of the parent signal", async () => {
    const parent = new AbortController();
    const budget = new WorkBudget(1_000, parent.signal);
    budget.start();
    await expect(budget.run(Promise.resolve('page'))).resolves.toBe('page');
    parent.abort();
    expect(budget.signal.aborted).toBe(false); // detached: the parent no longer reaches it
  });

  it('rejects with BudgetExceededError when the time runs out, without waiting for the work, and aborts its signal', async () => {
    const budget = new WorkBudget(20, undefined, 'the fetch of /slow');
    budget.start();
    const started = Date.now();
    const err = await budget.run(never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExceededError);
    expect(String((err as Error).message)).toContain('the fetch of /slow ran past its budget of 20 ms');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(budget.signal.reason).toBe(err);
  });

  it('does not charge the time before start()', async () => {
    const budget = new WorkBudget(20);
    const work = new Promise<string>((resolve) => setTimeout(() => resolve('done'), 60));
    await expect(budget.run(work)).resolves.toBe('done');
  });

  it('rejects at once when run after the budget ran out, and a late failure of the work is handled', async () => {
    const budget = new WorkBudget(5);
    budget.start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('cut')), 10));
    await expect(budget.run(late)).rejects.toBeInstanceOf(BudgetExceededError);
    await new Promise((resolve) => setTimeout(resolve, 30)); // an unhandled rejection would fail the run here
  });

  it("aborts the work's signal with the parent's reason", () => {
    const parent = new AbortController();
    const budget = new WorkBudget(1_000, parent.signal);
    parent.abort(new Error('partition revoked'));
    expect((budget.signal.reason as Error).message).toBe('partition revoked');
  });

  it('holds no link to the result of the work it ran (a budget can outlive its page)', async () => {
    const budget = new WorkBudget(60_000);
    budget.start();
    let page: { body: string } | undefined = { body: 'x'.repeat(100_000) };
    const result = new WeakRef(page);
    await budget.run(Promise.resolve(page));
    page = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(result.deref()).toBeUndefined();
    expect(budget.signal.aborted).toBe(false); // the budget itself is still here
  });
});
