import { TrawlError } from '@trawl/schemas';
import type { QuotaRefusal } from './quota-decision.ts';

/**
 * A request that a user's quota refuses: retriable in time (a job ends, the day moves on), except
 * for a cadence below the minimum interval, which no waiting fixes.
 */
export class QuotaExceededError extends TrawlError {
  readonly code = 'TRAWL_QUOTA_EXCEEDED';
  readonly retriable: boolean;
  readonly limit: QuotaRefusal['limit'];
  readonly value: number;
  readonly used: number;
  /** Seconds until room comes back by itself, when the limit is counted over a window. */
  readonly retryAfterSeconds: number | undefined;

  constructor(refusal: QuotaRefusal) {
    super(refusal.message);
    this.limit = refusal.limit;
    this.value = refusal.value;
    this.used = refusal.used;
    this.retryAfterSeconds = refusal.retryAfterSeconds;
    this.retriable = refusal.limit !== 'min_interval_seconds';
  }
}
