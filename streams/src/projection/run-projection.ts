/**
 * runProjection: a consumer for read models with exactly-once effect. Each batch of one
 * partition is decoded and applied in ONE Postgres transaction together with the partition's
 * `stream_offsets` row; an event applies if and only if its offset is at or past that row. With
 * `combinePartitions`, batches of several partitions share one transaction (group commit), each
 * with its own row, locked and moved in that transaction.
 * Kafka's group commits are a convenience (they keep lag visible and restarts short); Postgres
 * is the truth.
 *
 * Positioning. After every assignment, the first batch of each partition is compared with the
 * stored offset: if it does not start there, the partition is sought to the stored offset and the
 * batch dropped. That covers a group offset behind Postgres (the common case after a crash: skip
 * ahead), ahead of it (a read model rebuilt from scratch: go back), and a stored offset that no
 * longer exists (retention): after one seek whatever comes is taken, and offsets below the stored
 * one are skipped. Seeking from GROUP_JOIN instead would race the first fetch, since the stored
 * offset needs an async query.
 *
 * Failures. Postgres down, the registry unreachable, `apply` throwing: the transaction rolls
 * back, the partition is paused and retried with backoff from the same offset, so nothing is lost
 * and nothing counted twice. A deterministic `apply` bug therefore stalls its partition (visible
 * as lag and trawl_projection_failures_total) rather than silently skipping events.
 *
 * Undecodable events go to the dead-letter topic (with their origin) before the transaction and
 * their offsets advance with the batch. A crash between the two writes the dead letter twice;
 * dead letters are at-least-once. A schema id the registry does not know is an outage, not an
 * undecodable event: the batch waits for it like for an unreachable registry.
 *
 * Crashes. The first batch of a partition after an assignment is what a previous owner may have
 * died applying: its events' deliveries are counted first (reread-batch.ts), and one delivered
 * TRAWL_MAX_DELIVERIES times without an outcome is dead-lettered as poison and skipped.
 *
 * Producing from `apply` (the frontier: produce first, then commit state + offsets): await the
 * sends inside `apply`. The transaction commits only after Kafka acknowledged them; if it then
 * fails, the batch is applied again and the sends repeat, which deterministic event ids absorb.
 */
import pg from 'pg';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { createKafka } from '../kafka/client.ts';
import { createLogger } from '../logger.ts';
import { endpoints } from '../config/endpoints.ts';
import { EventCodec } from '../registry/event-codec.ts';
import { EventProducer } from '../producer/event-producer.ts';
import { TOPICS, consumerGroup } from '../topics/catalogue.ts';
import { requireTopics } from '../topics/require-topics.ts';
import { InvalidOptionError } from '../errors.ts';
import { Backoff, sleep } from '../util/backoff.ts';
import { PauseControl, tpKey } from '../consumer/pause-control.ts';
import { OffsetCommitter, groupOffsetsByTopic, type CommitTarget } from '../consumer/offset-committer.ts';
import { HeartbeatKeeper } from '../consumer/heartbeat-keeper.ts';
import { defaultMetrics } from '../metrics/metrics-registry.ts';
import { ProjectionMetrics, type ProjectionStats } from '../metrics/projection-metrics.ts';
import { startStatsLog } from '../metrics/stats-log.ts';
import { claimOffset, ensureOffsetsTable, lockOffsets, saveOffsets } from './offset-store.ts';
import { DeliveryCounter, maxDeliveriesOf } from '../consumer/delivery-counter.ts';
import { deleteDeliveriesBelow } from '../consumer/delivery-store.ts';
import { applyRereadBatch, type RereadBatchDeps } from './reread-batch.ts';
import { decodeBatch, rawBatch, type DecodeBatchDeps } from './decode-batch.ts';
import { inTransaction } from './pg-transaction.ts';
import {
  projectionFetchSettings,
  type ApplyEvents,
  type Projection,
  type ProjectedEvent,
  type ProjectionOptions,
  type RawProjectionOptions,
} from './projection-options.ts';

export type { ApplyEvents, ApplyMessages, Projection, ProjectedEvent, ProjectedEventOf, ProjectedMessage, ProjectionOptions, RawProjectionOptions } from './projection-options.ts';

interface Position {
  readonly topic: string;
  readonly partition: number;
  next: bigint;
  positioned: boolean;
  committedToGroup: bigint;
  highWatermark: bigint | undefined;
  /** Until its first batch is applied: the batch a previous owner may have died in (reread-batch.ts). */
  reread: boolean;
  readonly recordedHere: Map<bigint, number>;
}

/** One partition's decoded batch, on its way into a transaction. */
interface PartitionBatch {
  readonly topic: string;
  readonly partition: number;
  readonly events: readonly ProjectedEvent[];
  /** The offset after the batch's last message (dead letters and skipped events included). */
  readonly nextAfter: bigint;
  /** Forget the partition's delivery counts below nextAfter in the same transaction. */
  readonly forgetDeliveries?: boolean;
}

type GroupCommit = (offsets: { topic: string; partition: number; offset: string }[]) => Promise<void>;

class PostgresProjection implements Projection {
  readonly name: string;
  readonly groupId: string;
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private readonly logger: Logger;
  private readonly kafka: Kafka;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly codec: EventCodec;
  /** For dead letters; none in raw mode, which dead-letters nothing. */
  private readonly producer: EventProducer | undefined;
  private readonly ownsProducer: boolean;
  private readonly deadLetterTopic: string;
  private readonly deliveries: DeliveryCounter;
  private readonly metrics: ProjectionMetrics;
  private readonly pauses: PauseControl;
  private readonly committer: OffsetCommitter;
  private readonly heartbeats: HeartbeatKeeper;
  private readonly positions = new Map<string, Position>();
  private readonly backoffs = new Map<string, Backoff>();
  /** combinePartitions: batches waiting for the next combined transaction, and the one running. */
  private queued: (PartitionBatch & { resolve(applied: number): void; reject(err: unknown): void })[] = [];
  private combining: Promise<void> | undefined;
  private consumer: Consumer | undefined;
  private groupCommit: GroupCommit | undefined;
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  private stopping: Promise<void> | undefined;
  private stopStatsLog: () => void = () => {};

  /** `raw`: messages go to `apply` undecoded (runRawProjection). */
  constructor(
    private readonly o: ProjectionOptions,
    private readonly raw = false,
  ) {
    if (!o.name) throw new InvalidOptionError('name is required');
    if (o.topics.length === 0) throw new InvalidOptionError('topics must not be empty');
    if (typeof o.apply !== 'function') throw new InvalidOptionError('apply must be a function');
    this.name = o.name;
    this.groupId = o.groupId ?? consumerGroup(`trawl-projection-${o.name}`);
    this.ready = new Promise((r) => (this.resolveReady = r));
    this.logger = (o.logger ?? createLogger(`projection-${o.name}`)).child({ projection: o.name });
    this.kafka = o.kafka ?? createKafka({ clientId: `projection-${o.name}`, logger: this.logger });
    this.ownsPool = !o.pool;
    this.pool =
      o.pool ??
      new pg.Pool({
        connectionString: o.databaseUrl ?? endpoints().databaseUrl,
        max: (o.partitionsConsumedConcurrently ?? 4) + 2,
        connectionTimeoutMillis: 5_000,
      });
    // An idle client whose server went away emits 'error' on the pool; without a listener that
    // would crash the process. The next query simply fails and is retried.
    this.pool.on('error', (err) => this.logger.warn({ err }, 'idle Postgres client failed'));
    this.codec = o.codec ?? o.producer?.codec ?? new EventCodec();
    this.ownsProducer = !o.producer && !raw;
    this.producer = raw ? undefined : (o.producer ?? new EventProducer({ kafka: this.kafka, logger: this.logger, codec: this.codec }));
    this.deadLetterTopic = o.deadLetterTopic ?? TOPICS.eventsDlq;
    if (!raw && o.topics.includes(this.deadLetterTopic)) throw new InvalidOptionError(`dead-letter topic ${this.deadLetterTopic} cannot also be projected`);
    this.metrics = new ProjectionMetrics(o.metrics ?? defaultMetrics, o.name, this.groupId, () =>
      [...this.positions.values()].map((p) => ({
        topic: p.topic,
        partition: p.partition,
        nextOffset: p.next,
        highWatermark: p.highWatermark,
        paused: this.pauses.isPaused(p.topic, p.partition),
      })),
    );
    this.deliveries = new DeliveryCounter({
      groupId: this.groupId,
      maxDeliveries: maxDeliveriesOf(o.maxDeliveries),
      pool: this.pool,
      logger: this.logger,
      backoff: o.backoff ?? { initialMs: 200, maxMs: 30_000 },
    });
    this.pauses = new PauseControl(() => this.consumer, this.logger);
    this.committer = new OffsetCommitter({
      collect: () => this.commitTargets(),
      send: (offsets) => (this.groupCommit ? this.groupCommit(offsets) : Promise.reject(new Error('no batch yet'))),
      logger: this.logger,
      intervalMs: o.commitIntervalMs ?? 1_000,
    });
    this.heartbeats = new HeartbeatKeeper(o.heartbeatIntervalMs ?? 3_000, () => this.active > 0, this.logger, () => this.committer.request());
  }

  async start(): Promise<void> {
    if (this.o.checkTopics ?? true) await requireTopics(this.kafka, this.raw ? [...this.o.topics] : [...this.o.topics, this.deadLetterTopic]);
    await this.waitForPostgres();
    await this.o.setup?.(this.pool);
    await this.producer?.connect();
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      sessionTimeout: this.o.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: this.o.heartbeatIntervalMs ?? 3_000,
      ...projectionFetchSettings(this.o),
      maxBytesPerPartition: this.o.maxBytesPerPartition ?? 1024 * 1024,
      allowAutoTopicCreation: false,
      ...(this.o.partitionAssigners ? { partitionAssigners: [...this.o.partitionAssigners] } : {}),
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.onGroupJoin(payload.memberAssignment));
    consumer.on(consumer.events.REBALANCING, () => void this.committer.flush());
    consumer.on(consumer.events.CRASH, ({ payload }) => this.onCrash(payload.error, payload.restart));
    await consumer.connect();
    await consumer.subscribe({ topics: [...this.o.topics], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.o.partitionsConsumedConcurrently ?? 4,
      eachBatch: (payload) => this.onBatch(payload),
    });
    this.committer.start();
    this.heartbeats.start();
    this.stopStatsLog = startStatsLog(
      this.logger,
      this.o.statsLogIntervalMs ?? 60_000,
      { count: () => this.metrics.stats().applied, snapshot: () => ({ ...this.metrics.stats(), partitions: undefined }) },
      'projection stats',
    );
    this.logger.info({ topics: this.o.topics, groupId: this.groupId }, 'projection started');
  }

  private async waitForPostgres(): Promise<void> {
    const deadline = Date.now() + (this.o.startTimeoutMs ?? 60_000);
    const backoff = new Backoff(this.o.backoff ?? { initialMs: 200, maxMs: 5_000 });
    for (;;) {
      try {
        await ensureOffsetsTable(this.pool);
        return;
      } catch (err) {
        if (Date.now() >= deadline) throw err;
        const delay = backoff.next();
        this.logger.warn({ err, retryInMs: delay }, 'Postgres not ready; waiting');
        await sleep(delay);
      }
    }
  }

  stats(): ProjectionStats {
    return this.metrics.stats();
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    this.heartbeats.use(payload.heartbeat);
    this.groupCommit = (offsets) => payload.commitOffsetsIfNecessary({ topics: groupOffsetsByTopic(offsets) });
    if (this.stopping || !payload.isRunning() || payload.isStale() || payload.batch.messages.length === 0) return;
    this.active += 1;
    try {
      await this.project(payload);
    } finally {
      this.active -= 1;
      if (this.active === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
    }
  }

  private async project(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { topic, partition } = batch;
    const key = tpKey(topic, partition);
    try {
      let pos = this.positions.get(key);
      if (!pos) {
        const stored = await claimOffset(this.pool, this.name, topic, partition);
        pos = {
          topic,
          partition,
          next: stored.nextOffset,
          positioned: false,
          committedToGroup: -1n,
          highWatermark: undefined,
          reread: stored.existed,
          recordedHere: new Map(),
        };
        this.positions.set(key, pos);
      }
      pos.highWatermark = BigInt(batch.highWatermark);
      const first = BigInt(batch.messages[0]!.offset);
      if (!pos.positioned) {
        pos.positioned = true;
        if (first !== pos.next) {
          this.logger.debug({ topic, partition, fetched: String(first), stored: String(pos.next) }, 'seeking to the stored offset');
          this.consumer!.seek({ topic, partition, offset: String(pos.next) });
          return;
        }
      }
      const last = batch.messages[batch.messages.length - 1]!;
      const nextAfter = BigInt(last.offset) + 1n;
      const fresh = batch.messages.filter((m) => BigInt(m.offset) >= pos.next);
      this.metrics.skipped(batch.messages.length - fresh.length);
      if (fresh.length > 0) {
        const { events, deadLetters } = this.raw ? rawBatch(topic, partition, fresh) : await decodeBatch(this.decodeDeps, topic, partition, fresh);
        // Dead letters first: once the offset moves past them they must already be safe.
        if (deadLetters.length > 0) {
          await Promise.all(deadLetters.map((d) => this.producer!.sendRaw(d)));
          this.metrics.deadLettered(deadLetters.length);
        }
        let applied: number;
        if (pos.reread) {
          applied = await applyRereadBatch(this.rereadDeps(topic, partition), pos, events, fresh, nextAfter);
          pos.reread = false;
          pos.recordedHere.clear();
        } else {
          // A partition that failed before runs alone: one bad batch must not stall the others.
          const share = this.o.combinePartitions === true && !this.backoffs.has(key);
          const own: PartitionBatch = { topic, partition, events, nextAfter };
          applied = share ? await this.combined(own) : (await this.applyGroup([own]))[0]!;
        }
        this.metrics.applied(topic, applied);
        this.metrics.skipped(events.length - applied);
        this.metrics.batch();
      }
      if (nextAfter > pos.next) pos.next = nextAfter;
      payload.resolveOffset(last.offset);
      this.backoffs.delete(key);
    } catch (err) {
      this.retryLater(topic, partition, err);
    }
  }

  private get decodeDeps(): DecodeBatchDeps {
    return { codec: this.codec, deadLetterTopic: this.deadLetterTopic, metrics: this.metrics, logger: this.logger };
  }

  private rereadDeps(topic: string, partition: number): RereadBatchDeps {
    return {
      deliveries: this.deliveries,
      metrics: this.metrics,
      logger: this.logger,
      deadLetterTopic: this.deadLetterTopic,
      apply: async (events, nextAfter) => (await this.applyGroup([{ topic, partition, events, nextAfter, forgetDeliveries: true }]))[0]!,
      send: async (record) => {
        if (!this.producer) {
          // A raw projection reads dead-letter topics: there is nowhere further to send a poison
          // one. It stays in its topic (kept for ever); only this read model goes without it.
          this.logger.error({ topic, partition }, 'poison message left out of the raw projection; it stays in its topic');
          return;
        }
        await this.producer.sendRaw(record);
      },
    };
  }

  /**
   * Group commit: the batch joins the next combined transaction. While one runs, batches of other
   * partitions queue, and all of them go in the next; the first waits one turn of the event loop so
   * that the partitions of the same fetch come along. Resolves with the batch's applied count, or
   * rejects with the transaction's error (every batch in it is then retried on its own).
   */
  private combined(batch: PartitionBatch): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queued.push({ ...batch, resolve, reject });
      this.kickCombined();
    });
  }

  private kickCombined(): void {
    if (this.combining || this.queued.length === 0) return;
    this.combining = new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        const group = this.queued.splice(0);
        try {
          const applied = await this.applyGroup(group);
          group.forEach((b, i) => b.resolve(applied[i]!));
        } catch (err) {
          group.forEach((b) => b.reject(err));
        }
      })
      .finally(() => {
        this.combining = undefined;
        this.kickCombined();
      });
  }

  /**
   * One transaction for the batches of one or more partitions: lock their offset rows, apply what
   * lies at or past them, move the rows. Returns each batch's applied count. Two batches of one
   * partition (not expected: kafkajs hands a partition's batches over one at a time) would count
   * their overlap once, as two transactions in a row would.
   */
  private async applyGroup(group: readonly PartitionBatch[]): Promise<number[]> {
    return inTransaction(this.pool, async (tx) => {
      const stored = await lockOffsets(tx, this.name, group);
      const toApply = group.map((b) => {
        const key = tpKey(b.topic, b.partition);
        const from = stored.get(key)!.nextOffset;
        if (b.nextAfter > from) stored.set(key, { topic: b.topic, partition: b.partition, nextOffset: b.nextAfter });
        return b.events.filter((e) => BigInt(e.offset) >= from);
      });
      const all = toApply.flat();
      if (all.length > 0) await this.o.apply(all, tx);
      await saveOffsets(tx, this.name, [...stored.values()]);
      for (const b of group) if (b.forgetDeliveries) await deleteDeliveriesBelow(tx, this.groupId, b.topic, b.partition, b.nextAfter);
      return toApply.map((events) => events.length);
    });
  }

  /** Pauses the partition and lets it fetch the same batch again after a backoff. */
  private retryLater(topic: string, partition: number, err: unknown): void {
    const key = tpKey(topic, partition);
    let backoff = this.backoffs.get(key);
    if (!backoff) this.backoffs.set(key, (backoff = new Backoff(this.o.backoff ?? { initialMs: 200, maxMs: 30_000 })));
    const delay = backoff.next();
    this.metrics.failed();
    const log = backoff.failures > 5 ? this.logger.error.bind(this.logger) : this.logger.warn.bind(this.logger);
    log({ err, topic, partition, failures: backoff.failures, retryInMs: delay }, 'projection batch failed; retrying from the same offset');
    if (!this.stopping) this.pauses.pauseUntil(topic, partition, 'backoff', Date.now() + delay);
  }

  private commitTargets(): CommitTarget[] {
    const targets: CommitTarget[] = [];
    for (const pos of this.positions.values()) {
      if (!pos.positioned || pos.next <= pos.committedToGroup) continue;
      const offset = pos.next;
      targets.push({
        topic: pos.topic,
        partition: pos.partition,
        offset,
        acknowledge: () => {
          if (offset > pos.committedToGroup) pos.committedToGroup = offset;
        },
      });
    }
    return targets;
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    const assigned = new Set<string>();
    for (const [topic, partitions] of Object.entries(assignment)) for (const p of partitions) assigned.add(tpKey(topic, p));
    for (const [key, pos] of this.positions) if (!assigned.has(key)) this.pauses.forget(pos.topic, pos.partition);
    // Every partition re-reads its stored offset on its next batch: another member may have
    // moved it while it was not ours.
    this.positions.clear();
    this.metrics.assigned();
    this.logger.info({ assignment }, 'partitions assigned');
    this.resolveReady();
  }

  private onCrash(error: unknown, restart: boolean): void {
    this.logger.error({ err: error, restart }, 'kafka consumer crashed');
    this.positions.clear();
    this.pauses.clear();
    this.groupCommit = undefined;
    if (!restart) void this.stop();
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    const consumer = this.consumer;
    try {
      try {
        consumer?.pause(this.o.topics.map((topic) => ({ topic })));
      } catch {
        // never ran, or crashed
      }
      const drained =
        this.active === 0 ||
        (await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), this.o.drainTimeoutMs ?? 30_000);
          this.idleWaiters.push(() => {
            clearTimeout(timer);
            resolve(true);
          });
        }));
      if (!drained) this.logger.warn({ active: this.active }, 'drain timed out; abandoning running transactions');
      await this.committer.flush();
    } finally {
      this.committer.stop();
      this.heartbeats.stop();
      this.stopStatsLog();
      this.pauses.clear();
      await consumer?.disconnect().catch((err: unknown) => this.logger.warn({ err }, 'consumer disconnect failed'));
      if (this.ownsProducer) await this.producer!.disconnect().catch((err: unknown) => this.logger.warn({ err }, 'producer disconnect failed'));
      await this.deliveries.close();
      // pool.end() waits for checked-out clients: only wait when nothing was abandoned.
      if (this.ownsPool) {
        const ended = this.pool.end().catch(() => {});
        if (this.active === 0) await ended;
      }
      this.metrics.close();
      this.resolveReady();
      this.logger.info('projection stopped');
    }
  }
}

async function started(projection: PostgresProjection): Promise<Projection> {
  try {
    await projection.start();
  } catch (err) {
    await projection.stop().catch(() => {});
    throw err;
  }
  return projection;
}

export async function runProjection(options: ProjectionOptions): Promise<Projection> {
  return started(new PostgresProjection(options));
}

/**
 * runProjection for messages as they were read: the same exactly-once effect (offsets in the
 * transaction), positioning and retries, but no decoding and no dead-lettering — `apply` decides
 * what each message means. For projections of dead-letter topics.
 */
export async function runRawProjection(options: RawProjectionOptions): Promise<Projection> {
  return started(new PostgresProjection({ ...options, apply: options.apply as unknown as ApplyEvents }, true));
}
