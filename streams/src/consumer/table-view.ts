/**
 * subscribeTable: a process's own copy of a compacted state topic (trawl.sessions), read whole from
 * the beginning and then live, in a throw-away group that commits nothing — every instance reads
 * every partition. The latest record per key is the state; the listener keeps what it needs.
 *
 * `caughtUp()` is the read-your-writes step: it takes the topic's end offsets now and resolves once
 * every record before them has been handed to the listener. A process that takes over work from a
 * dead one calls it before it reads a state, so it sees whatever the dead one saved (every save
 * is acknowledged before the work it belongs to is committed). Bounded: it rejects after
 * `timeoutMs` with a retriable error, and the work is tried again.
 *
 * Undecodable records are skipped with a warning (a state topic has no dead letters: the next
 * record of the key replaces it anyway).
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import { RetriableError } from '../errors.ts';
import type { EventCodec } from '../registry/event-codec.ts';
import { topicOffsets } from '../reader/log-positions.ts';
import { RestingFetch, restSettings } from './resting-fetch.ts';

export interface TableRecord {
  readonly name: EventName;
  readonly value: unknown;
  readonly key: string | null;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

export interface TableSubscriptionOptions {
  readonly kafka: Kafka;
  readonly codec: EventCodec;
  readonly logger: Logger;
  readonly topic: string;
  /** Called for each record in partition order; synchronous, so that a record counts as read once it returns. */
  readonly onRecord: (record: TableRecord) => void;
  /** Prefix of the throw-away group id. */
  readonly groupPrefix: string;
}

export interface TableSubscription {
  /** Resolves once every record that existed when called has reached the listener. */
  caughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The table could not be read up to its end in time: retriable, the work waits for it. */
export class TableBehindError extends RetriableError {}

export async function subscribeTable(options: TableSubscriptionOptions): Promise<TableSubscription> {
  const { kafka, codec, logger, topic } = options;
  /** Next offset to read, per partition. */
  const positions = new Map<number, bigint>();
  const sessionTimeout = 30_000;
  // Quiet state topics rest like any consumer (consumer/resting-fetch.ts); a record still arrives at once.
  const pace = new RestingFetch({ busyWaitMs: 100, minBytes: 1, ...restSettings(sessionTimeout) });
  const consumer: Consumer = kafka.consumer({
    groupId: `${options.groupPrefix}-${randomUUID()}`,
    maxWaitTimeInMs: pace.maxWaitTimeInMs as unknown as number,
    minBytes: pace.minBytes as unknown as number,
    sessionTimeout,
  });
  const admin: Admin = kafka.admin();
  await Promise.all([consumer.connect(), admin.connect()]);
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: true,
    eachBatch: async ({ batch }) => {
      pace.wake();
      for (const m of batch.messages) {
        if (m.value) {
          try {
            const decoded = await codec.decode(m.value);
            options.onRecord({ name: decoded.name, value: decoded.value, key: m.key?.toString() ?? null, topic: batch.topic, partition: batch.partition, offset: m.offset });
          } catch (err) {
            logger.warn({ err, topic, partition: batch.partition, offset: m.offset }, 'state topic: skipped an unreadable record');
          }
        }
        positions.set(batch.partition, BigInt(m.offset) + 1n);
      }
      // An empty batch past compacted records still says where the partition is.
      const last = batch.lastOffset();
      if (BigInt(last) + 1n > (positions.get(batch.partition) ?? 0n)) positions.set(batch.partition, BigInt(last) + 1n);
    },
  });

  let stopped = false;
  return {
    async caughtUp(timeoutMs = 10_000): Promise<void> {
      const ends = await topicOffsets(admin, topic);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const behind = ends.filter((p) => BigInt(p.high) > BigInt(p.low) && (positions.get(p.partition) ?? 0n) < BigInt(p.high));
        if (behind.length === 0) return;
        if (stopped || Date.now() > deadline) throw new TableBehindError(`${topic}: not read up to its end within ${timeoutMs} ms (${behind.length} partitions behind)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop(): Promise<void> {
      stopped = true;
      await consumer.disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    },
  };
}
