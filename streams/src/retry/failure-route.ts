/**
 * Where a failed message goes next. Pure: the consumer runner asks, then does the I/O.
 *
 * - A non-retriable error: the dead-letter topic at once (retrying cannot help).
 * - A retriable error with tiers configured: attempt n failed → tier n, due after its delay; after
 *   the last tier → the dead-letter topic ("exhausted").
 * - A retriable error without tiers: retried in place with backoff, for as long as it takes. That
 *   holds one concurrency slot and the partition's commit point, never the other messages; it is
 *   the right call for consumers whose failures are outages (Kafka, Postgres), not bad input.
 *
 * A deferral (DeferredError) is no failure and routes apart (routeDeferral): it waits in the tier with
 * the shortest delay that covers its due time — the longest tier when none does, due when that tier's
 * delay is up, to be deferred again if still early — so a tier's messages stay roughly in due order
 * and one long wait never holds up a tier's partition. Without tiers it waits in place.
 */
import { isRetriable } from '@trawl/base';
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

/** Where a deferred message waits (a tier, or in place when there are none) and until when. */
export interface DeferralRoute {
  readonly tier: RetryTier | null;
  readonly dueAt: number;
}

export function routeDeferral(dueAt: number, tiers: readonly RetryTier[], now: number = Date.now()): DeferralRoute {
  if (tiers.length === 0) return { tier: null, dueAt };
  const wait = Math.max(0, dueAt - now);
  const covering = tiers.filter((t) => t.delayMs >= wait).sort((a, b) => a.delayMs - b.delayMs)[0];
  const tier = covering ?? tiers.reduce((a, b) => (b.delayMs > a.delayMs ? b : a));
  return { tier, dueAt: Math.min(dueAt, now + tier.delayMs) };
}
