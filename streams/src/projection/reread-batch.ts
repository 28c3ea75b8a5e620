/**
 * A projection's first batch of a partition after an assignment: the batch a previous owner may
 * have been applying when its process died (a projection applies one batch per partition at a
 * time, from the stored offset), so its events' deliveries are counted (delivery-verdict.ts)
 * before anything is applied.
 *
 * When no event of it ran during an earlier death, the batch is applied whole, as any other, after
 * one statement that records every event's delivery. Otherwise it goes one event per transaction:
 * an event delivered TRAWL_MAX_DELIVERIES times without an outcome is dead-lettered as poison and
 * the stored offset moves past it; a suspect (one that already ran during a death) is applied
 * alone among counted deliveries (DeliveryCounter.turn), its delivery recorded just before — so
 * when the process dies again, the one it dies on is the one that counts it. The transactions
 * forget the rows they move past.
 */
import type { KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { PoisonMessageError } from '../errors.ts';
import type { RawMessage } from '../producer/event-producer.ts';
import { deadLetterFor } from '../retry/dead-letter.ts';
import type { DeliveryCounter } from '../consumer/delivery-counter.ts';
import { deliveryVerdict, rereadHistory, type DeliveryVerdict } from '../consumer/delivery-verdict.ts';
import type { ProjectionMetrics } from '../metrics/projection-metrics.ts';
import type { ProjectedEvent } from './projection-options.ts';

export interface RereadPartition {
  readonly topic: string;
  readonly partition: number;
  /**
   * What this process recorded for its own deliveries here, by offset. A batch retried after a
   * failure (an outcome: Postgres down, `apply` throwing) is the same delivery again, not one more.
   */
  readonly recordedHere: Map<bigint, number>;
}

export interface RereadBatchDeps {
  readonly deliveries: DeliveryCounter;
  readonly metrics: ProjectionMetrics;
  readonly logger: Logger;
  readonly deadLetterTopic: string;
  /** Applies `events` (of the partition) in one transaction that moves its offset to `nextAfter` and forgets the counts below it; the applied count. */
  apply(events: readonly ProjectedEvent[], nextAfter: bigint): Promise<number>;
  /** Writes a record (a dead letter) and resolves once Kafka acknowledged it. */
  send(record: RawMessage): Promise<void>;
}

/** Dead-letters a poison event (before its offset is moved past it). */
async function poison(deps: RereadBatchDeps, where: RereadPartition, m: KafkaMessage, unfinished: number): Promise<void> {
  const error = new PoisonMessageError(
    `delivered ${unfinished} times without an outcome; the projection's process ended while applying it (a crash, a kill, or an event loop blocked past the watchdog)`,
  );
  deps.logger.error({ topic: where.topic, partition: where.partition, offset: m.offset, unfinished }, 'poison event: dead-lettering it and moving past it');
  const source = { topic: where.topic, partition: where.partition, offset: m.offset, key: m.key ?? null, value: m.value, headers: m.headers };
  await deps.send(deadLetterFor(source, { deadLetterTopic: deps.deadLetterTopic, reason: 'poison', attempts: unfinished, error }).record);
  deps.metrics.deadLettered(1);
  deps.metrics.poisoned();
}

/** Applies the batch (events decoded from `messages`, in offset order); the applied count. */
export async function applyRereadBatch(
  deps: RereadBatchDeps,
  where: RereadPartition,
  events: readonly ProjectedEvent[],
  messages: readonly KafkaMessage[],
  nextAfter: bigint,
): Promise<number> {
  const { deliveries } = deps;
  const at = (offset: bigint) => ({ topic: where.topic, partition: where.partition, offset });
  const offsets = events.map((e) => BigInt(e.offset));
  const recorded = await Promise.all(offsets.map(async (o) => (where.recordedHere.has(o) ? where.recordedHere.get(o)! - 1 : await deliveries.recorded(at(o)))));
  const verdicts: DeliveryVerdict[] = recorded.map((r) => deliveryVerdict(rereadHistory(0, r), deliveries.max));
  const record = async (offset: bigint, value: number) => {
    if (where.recordedHere.get(offset) === value) return;
    await deliveries.record(at(offset), value);
    where.recordedHere.set(offset, value);
  };

  const inTurn = async <T>(exclusive: boolean, work: () => Promise<T>): Promise<T> => {
    const release = await deliveries.turn(exclusive);
    try {
      return await work();
    } finally {
      release();
    }
  };

  if (verdicts.every((v) => v.kind === 'run' && !v.isolated)) {
    deps.metrics.reread(events.length, false);
    return inTurn(false, async () => {
      await Promise.all(verdicts.map((v, i) => record(offsets[i]!, (v as Extract<DeliveryVerdict, { kind: 'run' }>).record)));
      return deps.apply(events, nextAfter);
    });
  }

  const byOffset = new Map(messages.map((m) => [BigInt(m.offset), m]));
  let applied = 0;
  for (let i = 0; i < events.length; i++) {
    const offset = offsets[i]!;
    const verdict = verdicts[i]!;
    if (verdict.kind === 'poison') {
      await poison(deps, where, byOffset.get(offset)!, verdict.unfinished);
      await deps.apply([], offset + 1n);
      continue;
    }
    const one = async () => {
      await record(offset, verdict.record);
      return deps.apply([events[i]!], offset + 1n);
    };
    deps.metrics.reread(1, verdict.isolated);
    applied += await inTurn(verdict.isolated, one);
  }
  // Past the last event: offsets of dead letters after it, if any.
  await deps.apply([], nextAfter);
  return applied;
}
