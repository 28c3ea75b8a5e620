/**
 * Retry tiers: topics a failed message is forwarded to, each with the delay it waits there before
 * it runs again. A message never waits on its source partition, so one bad URL cannot hold up the
 * other hosts that share its partition.
 */
import { catalogueOptions, retryTopicName, TOPICS, type CatalogueOptions } from '../topics/catalogue.ts';
import { InvalidOptionError } from '../errors.ts';

export interface RetryTier {
  /** The tier's topic (`<source>.retry.<n>` by convention). */
  readonly topic: string;
  /** How long after the failure the message runs again. */
  readonly delayMs: number;
}

/** Tiers `<source>.retry.1..n` with the given delays. */
export function retryTiers(source: string, delaysMs: readonly number[]): RetryTier[] {
  return delaysMs.map((delayMs, i) => ({ topic: retryTopicName(source, i + 1), delayMs }));
}

/** The fetch consumer's tiers, as the catalogue declares them (TRAWL_FETCH_RETRY_DELAYS_MS). */
export function fetchRetryTiers(options: CatalogueOptions = catalogueOptions()): RetryTier[] {
  return retryTiers(TOPICS.fetch, options.fetchRetryDelaysMs);
}

/** The webhook deliveries' tiers, as the catalogue declares them (TRAWL_WEBHOOK_RETRY_DELAYS_MS). */
export function webhookRetryTiers(options: CatalogueOptions = catalogueOptions()): RetryTier[] {
  return retryTiers(TOPICS.webhooks, options.webhookRetryDelaysMs);
}

export function validateRetryTiers(tiers: readonly RetryTier[], subscribed: readonly string[]): void {
  const seen = new Set<string>();
  for (const tier of tiers) {
    if (!tier.topic) throw new InvalidOptionError('a retry tier needs a topic');
    if (!Number.isFinite(tier.delayMs) || tier.delayMs < 0) {
      throw new InvalidOptionError(`retry tier ${tier.topic}: delayMs must be a non-negative number, got ${tier.delayMs}`);
    }
    if (seen.has(tier.topic)) throw new InvalidOptionError(`retry tier ${tier.topic} is listed twice`);
    if (subscribed.includes(tier.topic)) throw new InvalidOptionError(`retry tier ${tier.topic} is also a source topic`);
    seen.add(tier.topic);
  }
}
