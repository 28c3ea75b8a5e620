/**
 * runEventConsumer: the work strategy of the group-member runtime (group-member.ts): messages are
 * processed in parallel within each partition and only what is finished is committed to the group
 * (the parallel-consumer pattern on kafkajs). The runtime connects, joins, heartbeats, commits on
 * its tick and stops; this file decides what is accepted, what runs, and what may be committed.
 *
 * How it uses kafkajs. A batch is not processed in `eachBatch`: its messages go to the
 * partition's tracker and `resolveOffset` is called on what was accepted. In kafkajs the resolved
 * offset is only the *fetch position* (autoCommit is off, so nothing commits it); commits carry the
 * tracker's lowest unfinished offset. Returning at once keeps the fetch loop — and with it
 * kafkajs's own heartbeats and rebalance detection — running while the handlers work.
 *
 * Backpressure. A partition stops accepting (and is paused) when its window — offsets between its
 * last commit and its next fetch — reaches maxUncommittedPerPartition, or when the consumer holds
 * maxBuffered unfinished messages. The window is also the at-least-once bound: a crash makes a
 * partition deliver again at most that many messages.
 *
 * Retry tiers. A message whose `trawl-due-at` is in the future is not accepted: its partition is
 * paused until then and the message is fetched again when it resumes. Only that tier partition
 * waits; nothing is held in memory and nothing is committed past it.
 *
 * Rebalances. kafkajs's rebalances are eager: on REBALANCING the runtime commits what is
 * finished (best effort, before rejoining). After GROUP_JOIN, partitions still owned keep their
 * tracker and are sought to its next offset (no re-fetch of what is in flight); partitions lost
 * are abandoned: queued messages dropped, running handlers signalled through `event.signal`, and
 * nothing of theirs committed again. Their uncommitted messages go to the new owner — the
 * duplicates at-least-once allows, at most the window per partition.
 *
 * Re-reads. The window is also what a previous owner may have started: when a partition is taken
 * on, the messages of its re-read window (reread-windows.ts) have their deliveries counted
 * (delivery-verdict.ts), so that a message that kills its process is dead-lettered as poison
 * instead of killing every owner in turn.
 */
import type { EachBatchPayload, Kafka } from 'kafkajs';
import { createKafka } from '../kafka/client.ts';
import { createLogger, defaultMetrics } from '@trawl/base';
import { EventCodec } from '../registry/event-codec.ts';
import { EventProducer } from '../producer/event-producer.ts';
import { dueAtOf } from '../retry/retry-headers.ts';
import { ConsumerMetrics, type ConsumerStats, type LiveSnapshot } from '../metrics/consumer-metrics.ts';
import { resolveConsumerOptions, type EventConsumerOptions, type ResolvedConsumerOptions } from './consumer-options.ts';
import type { TrackedEntry } from './partition-tracker.ts';
import { tpKey } from './pause-control.ts';
import type { CommitTarget } from './offset-committer.ts';
import { OwnedPartitions, type PartitionState } from './owned-partitions.ts';
import { MessageProcessor, type HandlerTurn, type IncomingMessage } from './message-processor.ts';
import { RereadWindows } from './reread-windows.ts';
import { startGroupMember, type GroupMemberHandle, type MemberEnd, type MemberRuntime, type MemberStrategy } from './group-member.ts';

/** How long a consumer with nothing left to do waits before committing what it finished (see commitWhenQuiet). */
const QUIET_COMMIT_MS = 100;

export type { EventConsumerOptions } from './consumer-options.ts';

export type ConsumerEnd = MemberEnd;

export type EventConsumer = GroupMemberHandle<ConsumerStats>;

function orderKey(key: Buffer | null | undefined): string | null {
  return key ? key.toString('latin1') : null;
}

class ParallelWork implements MemberStrategy<ConsumerStats> {
  private readonly producer: EventProducer;
  private readonly ownsProducer: boolean;
  private readonly metrics: ConsumerMetrics;
  private readonly processor: MessageProcessor;
  private readonly rereads: RereadWindows;
  private readonly partitions: OwnedPartitions<IncomingMessage>;
  /** Per partition as adopted, the hand-off of its last launched message (startInOrder). */
  private readonly handoffs = new WeakMap<PartitionState<IncomingMessage>, Promise<void>>();
  private quietCommit: NodeJS.Timeout | undefined;
  /** Messages accepted so far (commitWhenQuiet compares it to see whether work came meanwhile). */
  private accepted = 0;
  private assigned: Set<string> | undefined;
  private running = 0;
  private buffered = 0;
  private pumping = false;

  constructor(
    private readonly options: EventConsumerOptions,
    private readonly o: ResolvedConsumerOptions,
    private readonly runtime: MemberRuntime,
    kafka: Kafka,
  ) {
    const codec = options.codec ?? options.producer?.codec ?? new EventCodec();
    this.ownsProducer = !options.producer;
    this.producer = options.producer ?? new EventProducer({ kafka, logger: runtime.logger, codec });
    this.partitions = new OwnedPartitions({ concurrency: o.concurrency, keyOrdering: o.keyOrdering });
    this.metrics = new ConsumerMetrics(options.metrics ?? defaultMetrics, options.name, options.groupId, () => this.live());
    this.processor = new MessageProcessor({
      handler: options.handler,
      codec,
      producer: this.producer,
      retryTiers: o.retryTiers,
      deadLetterTopic: o.deadLetterTopic,
      onDeadLetter: options.onDeadLetter,
      deliveries: runtime.deliveries,
      stopping: runtime.stopping,
      backoff: o.retryBackoff,
      metrics: this.metrics,
      logger: runtime.logger,
    });
    this.rereads = new RereadWindows({
      kafka,
      groupId: options.groupId,
      topics: [...options.topics, ...o.retryTiers.map((t) => t.topic)],
      maxUncommittedPerPartition: o.maxUncommittedPerPartition,
      deliveries: runtime.deliveries,
      commit: (offsets) => runtime.commitToGroup(offsets),
      backoff: o.retryBackoff,
      logger: runtime.logger,
    });
  }

  commitTargets(): CommitTarget[] {
    return this.partitions.commitTargets();
  }

  onCommitted(): void {
    this.metrics.committed();
    this.maybeResume();
  }

  readonly statsLine = {
    count: () => this.metrics.stats().processed,
    snapshot: () => {
      const { partitions: _p, ...rest } = this.metrics.stats();
      return rest;
    },
  };

  describe(): object {
    return { topics: this.options.topics, retryTiers: this.o.retryTiers, deadLetterTopic: this.o.deadLetterTopic };
  }

  async prepare(): Promise<void> {
    await this.producer.connect();
  }

  stats(): ConsumerStats {
    return this.metrics.stats();
  }

  inFlight(): number {
    return this.running;
  }

  onBatch(payload: EachBatchPayload): void {
    const { batch } = payload;
    if (this.assigned && !this.assigned.has(tpKey(batch.topic, batch.partition))) return;
    // The first batch of a partition starts where the group's commit (or the reset) put it.
    const fetched = (batch as unknown as { fetchedOffset?: string }).fetchedOffset ?? batch.messages[0]!.offset;
    const state = this.partitions.get(batch.topic, batch.partition) ?? this.takeOn(batch.topic, batch.partition, BigInt(fetched), BigInt(batch.highWatermark));
    state.highWatermark = BigInt(batch.highWatermark);
    const { rereadEnd, reread } = state;
    const { pauses } = this.runtime;

    const now = Date.now();
    let resolved: string | undefined;
    let complete = true;
    for (const message of batch.messages) {
      const offset = BigInt(message.offset);
      if (offset < state.tracker.nextOffset) {
        resolved = message.offset; // already accepted before a rebalance or re-fetch
        continue;
      }
      if (state.tracker.window() >= BigInt(this.o.maxUncommittedPerPartition) || this.buffered >= this.o.maxBuffered) {
        pauses.pause(batch.topic, batch.partition, 'full');
        this.runtime.requestCommit();
        complete = false;
        break;
      }
      const due = dueAtOf(message.headers);
      if (due !== undefined && due > now) {
        pauses.pauseUntil(batch.topic, batch.partition, 'due', due);
        complete = false;
        break;
      }
      state.tracker.accept(offset, orderKey(message.key), { topic: batch.topic, partition: batch.partition, message, reread: offset < rereadEnd ? reread : undefined });
      this.buffered += 1;
      this.accepted += 1;
      resolved = message.offset;
    }
    if (complete) state.tracker.advanceTo(BigInt(batch.lastOffset()) + 1n);
    if (resolved !== undefined) payload.resolveOffset(resolved);
    this.pump();
  }

  /** Starts tracking a partition at its first batch, with its re-read window (reread-windows.ts). */
  private takeOn(topic: string, partition: number, fetched: bigint, highWatermark: bigint): PartitionState<IncomingMessage> {
    const state = this.partitions.adopt(topic, partition, fetched);
    const gone = () => this.runtime.stopping.aborted || !this.partitions.isCurrent(state);
    const { bound, window } = this.rereads.open(topic, partition, fetched, highWatermark, gone, state.abort.signal);
    state.rereadEnd = bound;
    state.reread = window;
    return state;
  }

  /** Starts what may start, one partition at a time in turn, within the global limit. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      this.partitions.dispatch(
        () => this.running >= this.o.maxConcurrency,
        (state, entry) => this.launch(state, entry),
      );
    } finally {
      this.pumping = false;
    }
  }

  private launch(state: PartitionState<IncomingMessage>, entry: TrackedEntry<IncomingMessage>): void {
    this.running += 1;
    void this.processor.process(entry.payload, state.abort.signal, this.o.startInOrder ? this.nextTurn(state) : undefined).then((finished) => this.settle(state, entry, finished));
  }

  /** The hand-off of a message launched now: after the partition's last launched one (startInOrder; launches come in offset order). */
  private nextTurn(state: PartitionState<IncomingMessage>): HandlerTurn {
    let handedOff!: () => void;
    const mine = new Promise<void>((resolve) => (handedOff = resolve));
    const after = this.handoffs.get(state) ?? Promise.resolve();
    this.handoffs.set(state, mine);
    return { after, handedOff };
  }

  private settle(state: PartitionState<IncomingMessage>, entry: TrackedEntry<IncomingMessage>, finished: boolean): void {
    this.running -= 1;
    if (finished && this.partitions.isCurrent(state)) {
      state.tracker.complete(entry);
      this.buffered -= 1;
    }
    if (this.runtime.pauses.any('full')) {
      this.runtime.requestCommit();
      this.maybeResume();
    }
    this.runtime.settled();
    if (this.buffered === 0) this.commitWhenQuiet();
    if (!this.runtime.stopping.aborted) this.pump();
  }

  /**
   * Everything accepted is done. If it stays so for QUIET_COMMIT_MS, commit then rather than at
   * the next tick, so the group's offsets (what lag monitors read) show a consumer that caught up
   * as caught up. A steady flow is never quiet that long, so it adds no commits there.
   */
  private commitWhenQuiet(): void {
    if (this.quietCommit || this.runtime.stopping.aborted) return;
    const acceptedBefore = this.accepted;
    this.quietCommit = setTimeout(() => {
      this.quietCommit = undefined;
      if (this.runtime.stopping.aborted || this.buffered > 0) return; // busy again: its next idle moment re-arms
      // Work came and went meanwhile (a slow steady flow): not quiet yet, look again later.
      if (this.accepted !== acceptedBefore) this.commitWhenQuiet();
      else this.runtime.requestCommit();
    }, QUIET_COMMIT_MS);
    this.quietCommit.unref();
  }

  /** Resumes partitions paused for backpressure once their window and the buffer have room. */
  private maybeResume(): void {
    const { pauses } = this.runtime;
    if (this.runtime.stopping.aborted) return;
    const full = pauses.pausedFor('full');
    if (full.length === 0 || this.buffered > Math.floor((this.o.maxBuffered * 3) / 4)) return;
    const roomAt = BigInt(Math.floor((this.o.maxUncommittedPerPartition * 3) / 4));
    for (const { topic, partition } of full) {
      const state = this.partitions.get(topic, partition);
      if (!state || state.tracker.window() <= roomAt) pauses.resume(topic, partition, 'full');
    }
  }

  onAssigned(assigned: ReadonlySet<string>): void {
    const { retained, revoked } = this.partitions.reconcile(assigned);
    for (const state of revoked) {
      this.runtime.logger.info(
        { topic: state.topic, partition: state.partition, running: state.tracker.running, unfinished: state.tracker.unfinished },
        'partition revoked; abandoning its unfinished work',
      );
      this.abandon(state);
    }
    for (const state of retained) {
      // Still ours: continue where the tracker is rather than re-fetch from the last commit.
      try {
        this.runtime.seek(state.topic, state.partition, state.tracker.nextOffset);
      } catch (err) {
        this.runtime.logger.warn({ err, topic: state.topic, partition: state.partition }, 'cannot seek retained partition; it will re-fetch from its commit');
      }
    }
    this.assigned = new Set(assigned);
    // Partitions taken on from now read the group's offsets and the log's ends as of this assignment.
    this.rereads.assigned(retained.length < assigned.size);
    this.metrics.assigned();
  }

  private abandon(state: PartitionState<IncomingMessage>): void {
    this.buffered -= this.partitions.abandon(state);
    this.runtime.pauses.forget(state.topic, state.partition);
  }

  onCrash(): void {
    for (const state of [...this.partitions.values()]) this.abandon(state);
    this.assigned = undefined;
  }

  dropQueued(): void {
    for (const state of this.partitions.values()) state.tracker.dropQueued();
  }

  abandonRunning(): void {
    for (const state of this.partitions.values()) state.abort.abort();
  }

  private live(): LiveSnapshot {
    return {
      inFlight: this.running,
      buffered: this.buffered,
      partitions: this.partitions.snapshot((topic, partition) => this.runtime.pauses.isPaused(topic, partition)),
    };
  }

  async close(): Promise<void> {
    if (this.quietCommit) clearTimeout(this.quietCommit);
    await this.rereads.close();
    if (this.ownsProducer) await this.producer.disconnect().catch((err: unknown) => this.runtime.logger.warn({ err }, 'producer disconnect failed'));
    this.metrics.close();
  }
}

/** Starts a parallel consumer; resolves once it runs (call `ready` to wait for partitions). */
export async function runEventConsumer(options: EventConsumerOptions): Promise<EventConsumer> {
  const o = resolveConsumerOptions(options);
  const logger = (options.logger ?? createLogger(options.name)).child({ consumer: options.name, groupId: options.groupId });
  const kafka = options.kafka ?? createKafka({ clientId: options.name, logger });
  const tiers = o.retryTiers.map((t) => t.topic);
  return startGroupMember(
    {
      kind: 'consumer',
      work: 'handlers',
      name: options.name,
      kafka,
      logger,
      consumer: {
        groupId: options.groupId,
        sessionTimeout: o.sessionTimeoutMs,
        heartbeatInterval: o.heartbeatIntervalMs,
        maxWaitTimeInMs: o.maxWaitTimeMs,
        minBytes: o.fetchMinBytes,
        allowAutoTopicCreation: false,
        ...(options.partitionAssigners ? { partitionAssigners: [...options.partitionAssigners] } : {}),
      },
      // Retry tiers are always read from their beginning: what is in them is owed to this group.
      subscriptions: [
        { topics: options.topics, fromBeginning: o.fromBeginning },
        { topics: tiers, fromBeginning: true },
      ],
      partitionsConsumedConcurrently: 1,
      ...(o.checkTopics ? { requiredTopics: [...options.topics, ...tiers, o.deadLetterTopic] } : {}),
      commitIntervalMs: o.commitIntervalMs,
      heartbeatIntervalMs: o.heartbeatIntervalMs,
      drainTimeoutMs: o.drainTimeoutMs,
      statsLogIntervalMs: o.statsLogIntervalMs,
      readyWhen: 'assigned',
      deliveries: {
        maxDeliveries: options.maxDeliveries,
        ...(options.pool ? { pool: options.pool } : {}),
        ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
        backoff: o.retryBackoff,
      },
    },
    (runtime) => new ParallelWork(options, o, runtime, kafka),
  );
}
