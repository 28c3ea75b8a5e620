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
  private expired: ((err: BudgetExceededError) => void) | undefined;
  private readonly expiry: Promise<never>;
  private readonly detach: () => void;

  /** `parent`: the delivery's own signal (the partition revoked, shutdown), passed on to the work. */
  constructor(
    readonly budgetMs: number,
    parent?: AbortSignal,
    private readonly label = 'the work',
  ) {
    setMaxListeners(0, this.controller.signal);
    this.expiry = new Promise<never>((_, reject) => (this.expired = reject));
    this.expiry.catch(() => undefined);
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
      this.controller.abort(err);
      this.expired?.(err);
    }, this.budgetMs);
  }

  /** The work's result, or BudgetExceededError as soon as the budget runs out. Ends the budget either way. */
  async run<T>(work: Promise<T>): Promise<T> {
    try {
      return await Promise.race([work, this.expiry]);
    } finally {
      this.end();
    }
  }

  /** Stops the clock and lets go of the parent signal. */
  end(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.detach();
  }
}
