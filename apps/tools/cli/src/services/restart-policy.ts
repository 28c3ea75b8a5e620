/**
 * When a supervised service that exited starts again: soon after a crash following a good run (a
 * SIGKILL, an out-of-memory kill), later and later while it keeps dying young (bad configuration,
 * a dependency away), so a crash loop costs little and still recovers on its own once the cause
 * goes away. Pure: the keeper gives it how long the service ran.
 */
export interface RestartPolicyOptions {
  /** The first restart's delay. Default 1 s. */
  readonly initialMs?: number;
  /** The longest delay. Default 60 s. */
  readonly maxMs?: number;
  /** A run at least this long counts as good: the delay starts over. Default 60 s. */
  readonly stableMs?: number;
}

export class RestartPolicy {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly stableMs: number;
  private quickExits = 0;

  constructor(options: RestartPolicyOptions = {}) {
    this.initialMs = options.initialMs ?? 1_000;
    this.maxMs = options.maxMs ?? 60_000;
    this.stableMs = options.stableMs ?? 60_000;
  }

  /** The delay before the next start, given how long the run that just ended lasted. */
  next(ranMs: number): number {
    if (ranMs >= this.stableMs) this.quickExits = 0;
    const delay = Math.min(this.maxMs, this.initialMs * 2 ** this.quickExits);
    this.quickExits = Math.min(this.quickExits + 1, 30);
    return delay;
  }
}
