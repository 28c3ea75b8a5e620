/**
 * Exponential backoff with full jitter, and an abortable sleep. Used wherever the streams package
 * waits for an outside part (Kafka, registry, Postgres) to come back: waiting is the only way not
 * to lose a message, and jitter keeps many partitions from retrying in lock-step.
 */

export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly factor?: number;
}

export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;

  constructor({ initialMs = 100, maxMs = 30_000, factor = 2 }: BackoffOptions = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.factor = factor;
  }

  /** The next delay: between half and all of initial·factor^n, capped at maxMs. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * this.factor ** this.attempt);
    this.attempt += 1;
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }

  /** Failures in a row so far. */
  get failures(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects: callers check the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
