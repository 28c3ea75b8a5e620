/**
 * Where the log stands: first and next offsets of every partition of some topics, and the offsets
 * at a point in time (what replays read up to, or start from).
 */
import type { Admin, Kafka } from 'kafkajs';

/**
 * A topic's partition offsets. Right after a topic is created (or the broker restarted) a partition
 * may have no leader yet, which kafkajs reports as a retriable error ("not the leader for that
 * topic-partition"): those are waited out for up to `patienceMs`, anything else is thrown.
 */
export async function topicOffsets(admin: Admin, topic: string, patienceMs = 30_000): ReturnType<Admin['fetchTopicOffsets']> {
  const until = Date.now() + patienceMs;
  for (;;) {
    try {
      return await admin.fetchTopicOffsets(topic);
    } catch (err) {
      if ((err as { retriable?: boolean }).retriable !== true || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export interface PartitionWatermarks {
  readonly topic: string;
  readonly partition: number;
  readonly low: bigint;
  readonly high: bigint;
}

export async function watermarks(kafka: Kafka, topics: readonly string[]): Promise<PartitionWatermarks[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const out: PartitionWatermarks[] = [];
    for (const topic of topics) {
      for (const p of await topicOffsets(admin, topic)) {
        out.push({ topic, partition: p.partition, low: BigInt(p.low), high: BigInt(p.high) });
      }
    }
    return out;
  } finally {
    await admin.disconnect();
  }
}

/** The first offset at or after `at` of every partition ("topic:partition" → offset). */
export async function offsetsAt(kafka: Kafka, topics: readonly string[], at: Date): Promise<Map<string, bigint>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const out = new Map<string, bigint>();
    for (const topic of topics) {
      const high = new Map((await topicOffsets(admin, topic)).map((p) => [p.partition, BigInt(p.high)]));
      for (const p of await admin.fetchTopicOffsetsByTimestamp(topic, at.getTime())) {
        // -1: nothing at or after `at` in this partition, so everything before its end is older.
        const offset = BigInt(p.offset);
        out.set(`${topic}:${p.partition}`, offset < 0n ? (high.get(p.partition) ?? 0n) : offset);
      }
    }
    return out;
  } finally {
    await admin.disconnect();
  }
}
