import type { Admin, ITopicConfig } from 'kafkajs';
import { ProvisioningError } from '../errors.ts';

/** Errors a broker answers for a topic it has created but not yet taken into its metadata. */
const NOT_YET_KNOWN = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

/**
 * Creates topics and waits until every partition has a leader. kafkajs's own wait
 * (`waitForLeaders`) gives up when a broker answers "does not host this topic-partition", which a
 * KRaft broker does for a topic the controller has just created and the broker's metadata has not
 * caught up with; on a loaded machine that window is long enough to fail a start-up. Here that
 * answer, like "leader not available", is waited out until `timeoutMs`.
 */
export async function createTopicsAndWait(admin: Admin, topics: readonly ITopicConfig[], timeoutMs = 60_000): Promise<void> {
  if (topics.length === 0) return;
  await admin.createTopics({ waitForLeaders: false, topics: [...topics] });
  const names = topics.map((t) => t.topic);
  const deadline = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    let pending: string;
    try {
      const { topics: meta } = await admin.fetchTopicMetadata({ topics: names });
      const leaderless = meta.find((t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0));
      if (!leaderless) return;
      pending = `${leaderless.name} has a partition without a leader`;
    } catch (err) {
      const type = protocolErrorType(err);
      if (!NOT_YET_KNOWN.has(type)) throw err;
      pending = `the broker answers ${type}`;
    }
    if (Date.now() + delay > deadline) {
      throw new ProvisioningError(`topics created but not ready after ${timeoutMs} ms (${pending}): ${names.join(', ')}`);
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** The Kafka error name of an error or of the error it wraps (kafkajs wraps the last one in its retrier's). */
function protocolErrorType(err: unknown): string {
  for (let e = err as { type?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.type === 'string') return e.type;
  }
  return '';
}
