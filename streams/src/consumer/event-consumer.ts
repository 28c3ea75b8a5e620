/**
 * runEventConsumer: a consumer-group member that processes messages in parallel within each
 * partition and commits only what is finished (the parallel-consumer pattern on kafkajs).
 *
 * How it uses kafkajs. `eachBatch` does not process anything: it hands the batch's messages to
 * the partition's tracker and returns, calling `resolveOffset` on what it accepted. In kafkajs
 * the resolved offset is only the *fetch position* (autoCommit is off, so nothing commits it);
 * commits are explicit, for the tracker's lowest unfinished offset. Returning quickly keeps the
 * fetch loop — and with it kafkajs's own heartbeats and rebalance detection — running while the
 * handlers work. Nothing is ever thrown from eachBatch: a throw makes kafkajs re-fetch from the
 * resolved offset and, after its retries, restart the consumer.
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
 * Rebalances. kafkajs's rebalances are eager: on REBALANCING the consumer commits what it has
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
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { createKafka } from '../kafka/client.ts';
import { createLogger } from '../logger.ts';
import { EventCodec } from '../registry/event-codec.ts';
import { EventProducer } from '../producer/event-producer.ts';
import { requireTopics } from '../topics/require-topics.ts';
import { dueAtOf } from '../retry/retry-headers.ts';
import { ConsumerMetrics, type ConsumerStats, type LiveSnapshot } from '../metrics/consumer-metrics.ts';
import { defaultMetrics } from '../metrics/metrics-registry.ts';
import { startStatsLog } from '../metrics/stats-log.ts';
import { resolveConsumerOptions, type EventConsumerOptions, type ResolvedConsumerOptions } from './consumer-options.ts';
import type { TrackedEntry } from './partition-tracker.ts';
import { PauseControl, tpKey } from './pause-control.ts';
import { OffsetCommitter, groupOffsetsByTopic } from './offset-committer.ts';
import { OwnedPartitions, type PartitionState } from './owned-partitions.ts';
import { HeartbeatKeeper } from './heartbeat-keeper.ts';
import { MessageProcessor, type IncomingMessage } from './message-processor.ts';
import { DeliveryCounter } from './delivery-counter.ts';
import { RereadWindows } from './reread-windows.ts';

/** How long a consumer with nothing left to do waits before committing what it finished (see commitWhenQuiet). */
const QUIET_COMMIT_MS = 100;

export type { EventConsumerOptions } from './consumer-options.ts';

export interface ConsumerEnd {
  readonly reason: 'stopped' | 'crashed';
  readonly error?: unknown;
}

export interface EventConsumer {
  readonly name: string;
  readonly groupId: string;
  /** Resolves when the group has assigned partitions the first time. */
  readonly ready: Promise<void>;
  /** Resolves when the consumer has stopped, or died of a crash kafkajs does not restart. */
  readonly done: Promise<ConsumerEnd>;
  stats(): ConsumerStats;
  /** Stops fetching, lets running handlers finish (up to drainTimeoutMs), commits, leaves the group. */
  stop(): Promise<void>;
}

type GroupCommit = (offsets: { topic: string; partition: number; offset: string }[]) => Promise<void>;

function orderKey(key: Buffer | null | undefined): string | null {
  return key ? key.toString('latin1') : null;
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

class ParallelConsumer implements EventConsumer {
  readonly name: string;
  readonly groupId: string;
  private readonly o: ResolvedConsumerOptions;
  private readonly kafka: Kafka;
  private readonly logger: Logger;
  private readonly producer: EventProducer;
  private readonly ownsProducer: boolean;
  private readonly metrics: ConsumerMetrics;
  private readonly processor: MessageProcessor;
  private readonly deliveries: DeliveryCounter;
  /** Aborted when shutdown begins. */
  private readonly stopped = new AbortController();
  private readonly rereads: RereadWindows;
  private readonly pauses: PauseControl;
  private readonly committer: OffsetCommitter;
  private quietCommit: NodeJS.Timeout | undefined;
  /** Messages accepted so far (commitWhenQuiet compares it to see whether work came meanwhile). */
  private accepted = 0;
  private readonly heartbeats: HeartbeatKeeper;
  private readonly partitions: OwnedPartitions<IncomingMessage>;
  private consumer: Consumer | undefined;
  private assigned: Set<string> | undefined;
  private groupCommit: GroupCommit | undefined;
  private running = 0;
  private buffered = 0;
  private pumping = false;
  private idleWaiters: (() => void)[] = [];
  private stopping: Promise<void> | undefined;
  private crashError: unknown;
  private stopStatsLog: () => void = () => {};
  private readonly readyState = deferred<void>();
  private readonly doneState = deferred<ConsumerEnd>();
  readonly ready = this.readyState.promise;
  readonly done = this.doneState.promise;

  constructor(private readonly options: EventConsumerOptions) {
    this.o = resolveConsumerOptions(options);
    this.name = options.name;
    this.groupId = options.groupId;
    this.logger = (options.logger ?? createLogger(options.name)).child({ consumer: options.name, groupId: options.groupId });
    this.kafka = options.kafka ?? createKafka({ clientId: options.name, logger: this.logger });
    const codec = options.codec ?? options.producer?.codec ?? new EventCodec();
    this.ownsProducer = !options.producer;
    this.producer = options.producer ?? new EventProducer({ kafka: this.kafka, logger: this.logger, codec });
    this.partitions = new OwnedPartitions({ concurrency: this.o.concurrency, keyOrdering: this.o.keyOrdering });
    this.metrics = new ConsumerMetrics(options.metrics ?? defaultMetrics, options.name, options.groupId, () => this.live());
    this.deliveries = new DeliveryCounter({
      groupId: options.groupId,
      maxDeliveries: this.o.maxDeliveries,
      ...(options.pool ? { pool: options.pool } : {}),
      ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
      logger: this.logger,
      backoff: this.o.retryBackoff,
    });
    this.processor = new MessageProcessor({
      handler: options.handler,
      codec,
      producer: this.producer,
      retryTiers: this.o.retryTiers,
      deadLetterTopic: this.o.deadLetterTopic,
      onDeadLetter: options.onDeadLetter,
      deliveries: this.deliveries,
      stopping: this.stopped.signal,
      backoff: this.o.retryBackoff,
      metrics: this.metrics,
      logger: this.logger,
    });
    this.rereads = new RereadWindows({
      kafka: this.kafka,
      groupId: options.groupId,
      topics: [...this.sourceTopics, ...this.tierTopics],
      maxUncommittedPerPartition: this.o.maxUncommittedPerPartition,
      deliveries: this.deliveries,
      commit: (offsets) => (this.groupCommit ? this.groupCommit(offsets) : Promise.reject(new Error('no batch received from this group member yet'))),
      backoff: this.o.retryBackoff,
      logger: this.logger,
    });
    this.pauses = new PauseControl(() => this.consumer, this.logger);
    this.committer = new OffsetCommitter({
      collect: () => this.partitions.commitTargets(),
      send: (offsets) => {
        if (!this.groupCommit) return Promise.reject(new Error('no batch received from this group member yet'));
        return this.groupCommit(offsets);
      },
      logger: this.logger,
      intervalMs: this.o.commitIntervalMs,
      onCommitted: () => {
        this.metrics.committed();
        this.maybeResume();
      },
    });
    this.heartbeats = new HeartbeatKeeper(this.o.heartbeatIntervalMs, () => this.running > 0, this.logger, () => this.committer.request());
  }

  private get sourceTopics(): string[] {
    return [...this.options.topics];
  }

  private get tierTopics(): string[] {
    return this.o.retryTiers.map((t) => t.topic);
  }

  async start(): Promise<void> {
    if (this.o.checkTopics) await requireTopics(this.kafka, [...this.sourceTopics, ...this.tierTopics, this.o.deadLetterTopic]);
    await this.producer.connect();
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      sessionTimeout: this.o.sessionTimeoutMs,
      heartbeatInterval: this.o.heartbeatIntervalMs,
      maxWaitTimeInMs: this.o.maxWaitTimeMs,
      minBytes: this.o.fetchMinBytes,
      allowAutoTopicCreation: false,
      ...(this.options.partitionAssigners ? { partitionAssigners: [...this.options.partitionAssigners] } : {}),
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.onGroupJoin(payload.memberAssignment));
    consumer.on(consumer.events.REBALANCING, () => void this.committer.flush());
    consumer.on(consumer.events.CRASH, ({ payload }) => this.onCrash(payload.error, payload.restart));
    await consumer.connect();
    await consumer.subscribe({ topics: this.sourceTopics, fromBeginning: this.o.fromBeginning });
    // Retry tiers are always read from their beginning: what is in them is owed to this group.
    if (this.tierTopics.length > 0) await consumer.subscribe({ topics: this.tierTopics, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.onBatch(payload),
    });
    this.committer.start();
    this.heartbeats.start();
    this.stopStatsLog = startStatsLog(this.logger, this.o.statsLogIntervalMs, {
      count: () => this.metrics.stats().processed,
      snapshot: () => {
        const { partitions: _p, ...rest } = this.metrics.stats();
        return rest;
      },
    }, 'consumer stats');
    this.logger.info({ topics: this.sourceTopics, retryTiers: this.o.retryTiers, deadLetterTopic: this.o.deadLetterTopic }, 'consumer started');
  }

  stats(): ConsumerStats {
    return this.metrics.stats();
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    this.heartbeats.use(payload.heartbeat);
    this.groupCommit = (offsets) => payload.commitOffsetsIfNecessary({ topics: groupOffsetsByTopic(offsets) });
    if (this.stopping || !payload.isRunning() || payload.isStale()) return;
    if (this.assigned && !this.assigned.has(tpKey(batch.topic, batch.partition))) return;
    // The first batch of a partition starts where the group's commit (or the reset) put it.
    const fetched = (batch as unknown as { fetchedOffset?: string }).fetchedOffset ?? batch.messages[0]!.offset;
    const state = this.partitions.get(batch.topic, batch.partition) ?? this.takeOn(batch.topic, batch.partition, BigInt(fetched), BigInt(batch.highWatermark));
    state.highWatermark = BigInt(batch.highWatermark);
    const { rereadEnd, reread } = state;

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
        this.pauses.pause(batch.topic, batch.partition, 'full');
        this.committer.request();
        complete = false;
        break;
      }
      const due = dueAtOf(message.headers);
      if (due !== undefined && due > now) {
        this.pauses.pauseUntil(batch.topic, batch.partition, 'due', due);
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
    const { bound, window } = this.rereads.open(topic, partition, fetched, highWatermark, () => Boolean(this.stopping) || !this.partitions.isCurrent(state), state.abort.signal);
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
    void this.processor.process(entry.payload, state.abort.signal).then((finished) => this.settle(state, entry, finished));
  }

  private settle(state: PartitionState<IncomingMessage>, entry: TrackedEntry<IncomingMessage>, finished: boolean): void {
    this.running -= 1;
    if (finished && this.partitions.isCurrent(state)) {
      state.tracker.complete(entry);
      this.buffered -= 1;
    }
    if (this.pauses.any('full')) {
      this.committer.request();
      this.maybeResume();
    }
    if (this.running === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
    if (this.buffered === 0) this.commitWhenQuiet();
    if (!this.stopping) this.pump();
  }

  /**
   * Everything accepted is done. If it stays so for QUIET_COMMIT_MS, commit then rather than at
   * the next tick, so the group's offsets (what lag monitors read) show a consumer that caught up
   * as caught up. A steady flow is never quiet that long, so it adds no commits there.
   */
  private commitWhenQuiet(): void {
    if (this.quietCommit || this.stopping) return;
    const acceptedBefore = this.accepted;
    this.quietCommit = setTimeout(() => {
      this.quietCommit = undefined;
      if (this.stopping || this.buffered > 0) return; // busy again: its next idle moment re-arms
      // Work came and went meanwhile (a slow steady flow): not quiet yet, look again later.
      if (this.accepted !== acceptedBefore) this.commitWhenQuiet();
      else this.committer.request();
    }, QUIET_COMMIT_MS);
    this.quietCommit.unref();
  }

  /** Resumes partitions paused for backpressure once their window and the buffer have room. */
  private maybeResume(): void {
    if (this.stopping) return;
    const full = this.pauses.pausedFor('full');
    if (full.length === 0 || this.buffered > Math.floor((this.o.maxBuffered * 3) / 4)) return;
    const roomAt = BigInt(Math.floor((this.o.maxUncommittedPerPartition * 3) / 4));
    for (const { topic, partition } of full) {
      const state = this.partitions.get(topic, partition);
      if (!state || state.tracker.window() <= roomAt) this.pauses.resume(topic, partition, 'full');
    }
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    const assigned = new Set<string>();
    for (const [topic, partitions] of Object.entries(assignment)) for (const p of partitions) assigned.add(tpKey(topic, p));
    const { retained, revoked } = this.partitions.reconcile(assigned);
    for (const state of revoked) {
      this.logger.info({ topic: state.topic, partition: state.partition, running: state.tracker.running, unfinished: state.tracker.unfinished }, 'partition revoked; abandoning its unfinished work');
      this.abandon(state);
    }
    for (const state of retained) {
      // Still ours: continue where the tracker is rather than re-fetch from the last commit.
      try {
        this.consumer?.seek({ topic: state.topic, partition: state.partition, offset: String(state.tracker.nextOffset) });
      } catch (err) {
        this.logger.warn({ err, topic: state.topic, partition: state.partition }, 'cannot seek retained partition; it will re-fetch from its commit');
      }
    }
    this.assigned = assigned;
    // Partitions taken on from now read the group's offsets and the log's ends as of this assignment.
    this.rereads.assigned(retained.length < assigned.size);
    this.metrics.assigned();
    this.logger.info({ assignment }, 'partitions assigned');
    this.readyState.resolve();
  }

  private abandon(state: PartitionState<IncomingMessage>): void {
    this.buffered -= this.partitions.abandon(state);
    this.pauses.forget(state.topic, state.partition);
  }

  private onCrash(error: unknown, restart: boolean): void {
    this.logger.error({ err: error, restart }, 'kafka consumer crashed');
    // The group is left on a crash: whatever this member held is someone else's now.
    for (const state of [...this.partitions.values()]) this.abandon(state);
    this.pauses.clear();
    this.assigned = undefined;
    this.groupCommit = undefined;
    if (!restart) {
      this.crashError = error;
      void this.stop();
    }
  }

  private live(): LiveSnapshot {
    return {
      inFlight: this.running,
      buffered: this.buffered,
      partitions: this.partitions.snapshot((topic, partition) => this.pauses.isPaused(topic, partition)),
    };
  }

  private waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    const consumer = this.consumer;
    this.stopped.abort();
    try {
      // No more fetching: pause everything, and give up what has not started.
      try {
        consumer?.pause([...this.sourceTopics, ...this.tierTopics].map((topic) => ({ topic })));
      } catch {
        // not running (never started, or crashed): nothing to pause
      }
      for (const state of this.partitions.values()) state.tracker.dropQueued();
      const drained = await this.waitIdle(this.o.drainTimeoutMs);
      if (!drained) {
        this.logger.warn({ running: this.running }, 'drain timed out; abandoning running handlers');
        for (const state of this.partitions.values()) state.abort.abort();
      }
      await this.committer.flush();
    } finally {
      this.committer.stop();
      if (this.quietCommit) clearTimeout(this.quietCommit);
      this.heartbeats.stop();
      this.stopStatsLog();
      this.pauses.clear();
      await consumer?.disconnect().catch((err: unknown) => this.logger.warn({ err }, 'consumer disconnect failed'));
      await this.deliveries.close();
      await this.rereads.close();
      if (this.ownsProducer) await this.producer.disconnect().catch((err: unknown) => this.logger.warn({ err }, 'producer disconnect failed'));
      this.metrics.close();
      this.readyState.resolve();
      this.logger.info('consumer stopped');
      this.doneState.resolve(this.crashError === undefined ? { reason: 'stopped' } : { reason: 'crashed', error: this.crashError });
    }
  }
}

/** Starts a parallel consumer; resolves once it runs (call `ready` to wait for partitions). */
export async function runEventConsumer(options: EventConsumerOptions): Promise<EventConsumer> {
  const consumer = new ParallelConsumer(options);
  try {
    await consumer.start();
  } catch (err) {
    await consumer.stop().catch(() => {});
    throw err;
  }
  return consumer;
}
