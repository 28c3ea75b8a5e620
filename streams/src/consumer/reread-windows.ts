/**
 * The re-read windows of runEventConsumer: when a partition is taken on (restart, rebalance), the
 * offsets a previous owner may have started, whose deliveries are therefore counted
 * (delivery-verdict.ts). That is at most `maxUncommittedPerPartition` past the group's commit (the
 * most a member may start beyond its last commit), and nothing that was not yet in the log when the
 * partition was assigned (no previous owner can have read it). Past the window nothing is counted:
 * the hot path pays a comparison per message.
 *
 * A partition the group never committed has nothing to re-read. Its start is committed before
 * anything runs there, so that a member dying on its very first messages leaves a commit — and
 * with it a window — to its successor.
 *
 * The group's commits and the log's ends are read once per assignment, in one admin round, from
 * the moment the assignment arrives; the window's end is known when that answers, and the
 * partition's first messages wait for it.
 */
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.ts';
import type { DeliveryCounter } from './delivery-counter.ts';
import type { RereadWindow } from './message-processor.ts';
import { tpKey } from './pause-control.ts';

interface Positions {
  /** -1 when the group has no commit. */
  readonly committed: bigint;
  readonly end: bigint;
}

export interface RereadWindowsOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  /** Every topic the consumer reads (sources and retry tiers). */
  readonly topics: readonly string[];
  readonly maxUncommittedPerPartition: number;
  readonly deliveries: DeliveryCounter;
  /** Commits an offset for the group (the member's current generation). */
  readonly commit: (offsets: { topic: string; partition: number; offset: string }[]) => Promise<void>;
  readonly backoff: BackoffOptions;
  readonly logger: Logger;
}

export class RereadWindows {
  private admin: Promise<Admin> | undefined;
  private atJoin: Promise<Map<string, Positions>> | undefined;

  constructor(private readonly o: RereadWindowsOptions) {}

  /** A new assignment: windows opened from now on use its positions (read at once when `fresh` partitions came with it). */
  assigned(fresh: boolean): void {
    this.atJoin = undefined;
    if (fresh) void this.positions().catch(() => undefined);
  }

  /**
   * The window of a partition taken on at `fetched`: its upper bound now (messages below it may be
   * re-reads), and the exact end once known. `gone()` says the partition was given up (stop waiting).
   */
  open(topic: string, partition: number, fetched: bigint, highWatermark: bigint, gone: () => boolean, signal: AbortSignal): { readonly bound: bigint; readonly window: RereadWindow } {
    const most = fetched + BigInt(this.o.maxUncommittedPerPartition);
    const bound = most < highWatermark ? most : highWatermark;
    const end = (async () => {
      const backoff = new Backoff(this.o.backoff);
      for (;;) {
        if (gone()) return fetched;
        try {
          const at = (await this.positions()).get(tpKey(topic, partition));
          if (at && at.committed >= 0n) {
            this.o.deliveries.forgetBelow(topic, partition, at.committed);
            return bound < at.end ? bound : at.end;
          }
          await this.o.commit([{ topic, partition, offset: String(fetched) }]);
          return fetched;
        } catch (err) {
          this.atJoin = undefined;
          const delay = backoff.next();
          this.o.logger.warn({ err, topic, partition, retryInMs: delay }, 'cannot tell whether the partition is re-read; its first messages wait');
          await sleep(delay, signal);
        }
      }
    })();
    return { bound, window: { end } };
  }

  async close(): Promise<void> {
    if (this.admin) await (await this.admin.catch(() => undefined))?.disconnect().catch(() => undefined);
  }

  private positions(): Promise<Map<string, Positions>> {
    this.atJoin ??= (async () => {
      this.admin ??= (async () => {
        const admin = this.o.kafka.admin();
        await admin.connect();
        return admin;
      })().catch((err: unknown) => {
        this.admin = undefined;
        throw err;
      });
      const admin = await this.admin;
      const [committed, ends] = await Promise.all([
        admin.fetchOffsets({ groupId: this.o.groupId, topics: [...this.o.topics] }),
        Promise.all(this.o.topics.map(async (topic) => ({ topic, partitions: await admin.fetchTopicOffsets(topic) }))),
      ]);
      const out = new Map<string, { committed: bigint; end: bigint }>();
      for (const { topic, partitions } of ends) for (const p of partitions) out.set(tpKey(topic, p.partition), { committed: -1n, end: BigInt(p.high) });
      for (const { topic, partitions } of committed) {
        for (const p of partitions) {
          const entry = out.get(tpKey(topic, p.partition));
          if (entry) entry.committed = BigInt(p.offset);
        }
      }
      return out;
    })().catch((err: unknown) => {
      this.atJoin = undefined;
      throw err;
    });
    return this.atJoin;
  }
}
