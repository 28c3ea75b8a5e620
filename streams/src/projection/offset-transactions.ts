/**
 * A projection's writes: the batches of one or more partitions applied in one Postgres
 * transaction together with their `stream_offsets` rows, locked and moved in it. An event is
 * applied if and only if its offset moves its partition's row, whoever else (a member that still
 * thinks it owns the partition) applies it too: the second waits for the row lock, then sees the
 * first's offset.
 *
 * Group commit (`combined`): batches of several partitions that arrive together share one
 * transaction. While one runs, the next batches queue, and all of them go in the one after; the
 * first waits one turn of the event loop so that the partitions of the same fetch come along.
 */
import type pg from 'pg';
import { tpKey } from '../consumer/pause-control.ts';
import { deleteDeliveriesBelow } from '../consumer/delivery-store.ts';
import { lockOffsets, saveOffsets } from './offset-store.ts';
import { inTransaction } from './pg-transaction.ts';
import type { ApplyEvents, ProjectedEvent } from './projection-options.ts';

/** One partition's decoded batch, on its way into a transaction. */
export interface PartitionBatch {
  readonly topic: string;
  readonly partition: number;
  readonly events: readonly ProjectedEvent[];
  /** The offset after the batch's last message (dead letters and skipped events included). */
  readonly nextAfter: bigint;
  /** Forget the partition's delivery counts below nextAfter in the same transaction. */
  readonly forgetDeliveries?: boolean;
}

export interface OffsetTransactionsOptions {
  readonly pool: pg.Pool;
  /** The projection's name: the key of its rows. */
  readonly projection: string;
  /** Whose delivery counts a re-read batch forgets. */
  readonly groupId: string;
  readonly apply: ApplyEvents;
}

export class OffsetTransactions {
  private queued: (PartitionBatch & { resolve(applied: number): void; reject(err: unknown): void })[] = [];
  private combining: Promise<void> | undefined;

  constructor(private readonly o: OffsetTransactionsOptions) {}

  /**
   * The batch in the next combined transaction. Resolves with its applied count, or rejects with
   * the transaction's error (every batch in it is then retried on its own).
   */
  combined(batch: PartitionBatch): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queued.push({ ...batch, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.combining || this.queued.length === 0) return;
    this.combining = new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        const group = this.queued.splice(0);
        try {
          const applied = await this.apply(group);
          group.forEach((b, i) => b.resolve(applied[i]!));
        } catch (err) {
          group.forEach((b) => b.reject(err));
        }
      })
      .finally(() => {
        this.combining = undefined;
        this.kick();
      });
  }

  /**
   * One transaction for the batches of one or more partitions: lock their offset rows, apply what
   * lies at or past them, move the rows. Returns each batch's applied count. Two batches of one
   * partition (not expected: kafkajs hands a partition's batches over one at a time) would count
   * their overlap once, as two transactions in a row would.
   */
  async apply(group: readonly PartitionBatch[]): Promise<number[]> {
    return inTransaction(this.o.pool, async (tx) => {
      const stored = await lockOffsets(tx, this.o.projection, group);
      const toApply = group.map((b) => {
        const key = tpKey(b.topic, b.partition);
        const from = stored.get(key)!.nextOffset;
        if (b.nextAfter > from) stored.set(key, { topic: b.topic, partition: b.partition, nextOffset: b.nextAfter });
        return b.events.filter((e) => BigInt(e.offset) >= from);
      });
      const all = toApply.flat();
      if (all.length > 0) await this.o.apply(all, tx);
      await saveOffsets(tx, this.o.projection, [...stored.values()]);
      for (const b of group) if (b.forgetDeliveries) await deleteDeliveriesBelow(tx, this.o.groupId, b.topic, b.partition, b.nextAfter);
      return toApply.map((events) => events.length);
    });
  }
}
