/**
 * Where the log stands: first and next offsets of every partition of some topics, and the offsets
 * at a point in time (what replays read up to, or start from).
 */
import type { Kafka } from 'kafkajs';

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
      for (const p of await admin.fetchTopicOffsets(topic)) {
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
      const high = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
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
