import type { Kafka } from 'kafkajs';
import { ProvisioningError } from '../errors.ts';

/**
 * Fails fast when a topic a consumer needs does not exist. The idempotent producer retries a
 * send to a missing topic forever, and it sends one batch at a time, so a misnamed dead-letter
 * topic would otherwise stall every send of the process instead of failing once at start-up.
 */
export async function requireTopics(kafka: Kafka, topics: readonly string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [...new Set(topics)].filter((t) => !existing.has(t));
    if (missing.length > 0) {
      throw new ProvisioningError(`missing topics: ${missing.join(', ')} (provision the catalogue, or create test topics first)`);
    }
  } finally {
    await admin.disconnect();
  }
}
