/**
 * Reads topics from the beginning up to the end they had when the read started, without joining
 * any consumer group's offsets (a throw-away group id, nothing committed). For tests that check
 * read models against the log, for replay, and for the CLI.
 */
import type { Kafka, IHeaders } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import type { EventCodec, DecodedEvent } from '../registry/event-codec.ts';
import { topicOffsets } from './log-positions.ts';

export interface LoggedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: IHeaders;
  readonly timestamp: string;
}

export interface LoggedEvent extends LoggedMessage {
  readonly event: DecodedEvent;
}

/** High watermark per partition of each topic, as "topic:partition" → next offset. */
export async function endOffsets(kafka: Kafka, topics: readonly string[]): Promise<Map<string, bigint>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ends = new Map<string, bigint>();
    for (const topic of topics) {
      for (const p of await topicOffsets(admin, topic)) ends.set(`${topic}:${p.partition}`, BigInt(p.high));
    }
    return ends;
  } finally {
    await admin.disconnect();
  }
}

export async function readTopics(kafka: Kafka, topics: readonly string[], onMessage?: (m: LoggedMessage) => void): Promise<LoggedMessage[]> {
  const ends = await endOffsets(kafka, topics);
  const remaining = new Set([...ends].filter(([, high]) => high > 0n).map(([k]) => k));
  const out: LoggedMessage[] = [];
  if (remaining.size === 0) return out;
  const consumer = kafka.consumer({ groupId: `trawl-reader-${randomUUID()}`, maxBytes: 16 * 1024 * 1024 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatchAutoResolve: true,
          eachBatch: async ({ batch }) => {
            const key = `${batch.topic}:${batch.partition}`;
            const high = ends.get(key) ?? 0n;
            for (const m of batch.messages) {
              if (BigInt(m.offset) >= high) break;
              const msg: LoggedMessage = {
                topic: batch.topic,
                partition: batch.partition,
                offset: m.offset,
                key: m.key,
                value: m.value,
                headers: m.headers ?? {},
                timestamp: m.timestamp,
              };
              out.push(msg);
              onMessage?.(msg);
              if (BigInt(m.offset) + 1n >= high) remaining.delete(key);
            }
            if (remaining.size === 0) resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return out;
}

/** Reads and decodes every event of the topics (in partition order within each partition). */
export async function readEvents(kafka: Kafka, codec: EventCodec, topics: readonly string[]): Promise<LoggedEvent[]> {
  const messages = await readTopics(kafka, topics);
  const out: LoggedEvent[] = [];
  for (const m of messages) out.push({ ...m, event: await codec.decode(m.value) });
  return out;
}
