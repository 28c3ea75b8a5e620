/**
 * Where a failed message goes next. Pure: the consumer runner asks, then does the I/O.
 *
 * - A non-retriable error: the dead-letter topic at once (retrying cannot help).
 * - A retriable error with tiers configured: attempt n failed → tier n, due after its delay; after
 *   the last tier → the dead-letter topic ("exhausted").
 * - A retriable error without tiers: retried in place with backoff, for as long as it takes. That
 *   holds one concurrency slot and the partition's commit point, never the other messages; it is
 *   the right call for consumers whose failures are outages (Kafka, Postgres), not bad input.
 */
import { isRetriable } from '../errors.ts';
import type { DeadLetterReason } from './retry-headers.ts';
import type { RetryTier } from './retry-tiers.ts';

export type FailureRoute =
  | { readonly kind: 'retry-tier'; readonly tier: RetryTier; readonly tierNumber: number; readonly nextAttempt: number; readonly dueAt: number }
  | { readonly kind: 'in-place'; readonly nextAttempt: number }
  | { readonly kind: 'dead-letter'; readonly reason: DeadLetterReason };

export function routeFailure(err: unknown, attempt: number, tiers: readonly RetryTier[], now: number = Date.now()): FailureRoute {
  if (!isRetriable(err)) return { kind: 'dead-letter', reason: 'non-retriable' };
  if (tiers.length === 0) return { kind: 'in-place', nextAttempt: attempt + 1 };
  const tier = tiers[attempt - 1];
  if (!tier) return { kind: 'dead-letter', reason: 'exhausted' };
  return { kind: 'retry-tier', tier, tierNumber: attempt, nextAttempt: attempt + 1, dueAt: now + tier.delayMs };
}
