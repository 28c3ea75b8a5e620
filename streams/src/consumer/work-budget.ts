/**
 * A wall-clock budget for one unit of work done by a handler (the worker's page: fetch + parse).
 * When it runs out, the work's signal aborts — an HTTP request is cut, a browser tab given up —
 * and `run` rejects with BudgetExceededError without waiting for the work, which may never end:
 * the consumer then counts the delivery as one without an outcome and retries it, until it is
 * poison (delivery-verdict.ts). The clock starts at `start()`, so what the handler waits for
 * before its work (a host's politeness slot) is not charged to it.
 *
 * A timer cannot stop code that blocks the event loop: that is the loop watchdog's part
 * (service/loop-watchdog.ts), whose limit should not exceed the budget.
 */
import { setMaxListeners } from 'node:events';
import { BudgetExceededError } from '../errors.ts';

export class WorkBudget {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** Set when the budget ran out. */
  private overrun: BudgetExceededError | undefined;
  /** Rejects the promise `run` returned, while it is pending. */
  private rejectRun: ((err: BudgetExceededError) => void) | undefined;
  private readonly detach: () => void;

  /** `parent`: the delivery's own signal (the partition revoked, shutdown), passed on to the work. */
  constructor(
    readonly budgetMs: number,
    parent?: AbortSignal,
    private readonly label = 'the work',
  ) {
    setMaxListeners(0, this.controller.signal);
    const onParent = () => this.controller.abort(parent!.reason);
    if (parent?.aborted) onParent();
    else parent?.addEventListener('abort', onParent, { once: true });
    this.detach = () => parent?.removeEventListener('abort', onParent);
  }

  /** Aborted when the budget runs out (reason: BudgetExceededError) or the parent signal aborts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts the clock; later calls do nothing. */
  start(): void {
    if (this.timer || this.controller.signal.aborted) return;
    this.timer = setTimeout(() => {
      const err = new BudgetExceededError(`${this.label} ran past its budget of ${this.budgetMs} ms`);
      this.overrun = err;
      this.controller.abort(err);
      this.rejectRun?.(err);
    }, this.budgetMs);
  }

  /**
   * The work's result, or BudgetExceededError as soon as the budget runs out. Ends the budget either
   * way. No promise that outlives the work is linked to its result: racing the work against one
   * that only the timer settles kept each page's result reachable from the budget, which lives as
   * long as the page and so reaches the old generation, until a full collection.
   */
  run<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (err: unknown) => {
        this.end();
        reject(err);
      };
      // Handled either way: a work that fails after the budget ran out is no unhandled rejection.
      work.then((result) => {
        this.end();
        resolve(result);
      }, fail);
      if (this.overrun) fail(this.overrun);
      else this.rejectRun = fail;
    });
  }

  /** Stops the clock and lets go of the parent signal. */
  end(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.rejectRun = undefined;
    this.detach();
  }
}
