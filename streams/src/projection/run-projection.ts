/**
 * runProjection: the read-model strategy of the group-member runtime (consumer/group-member.ts),
 * with exactly-once effect. The runtime connects, joins, heartbeats, commits to the group and
 * stops; this file positions, decodes, applies and retries. Each batch of one
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
import type { EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import { createKafka } from '../kafka/client.ts';
import { createLogger, endpoints, eventAttributes, inRecordTrace, startBatchSpan, defaultMetrics } from '@trawl/base';
import { EventCodec } from '../registry/event-codec.ts';
import { EventProducer } from '../producer/event-producer.ts';
import { TOPICS, consumerGroup } from '../topics/catalogue.ts';
import { InvalidOptionError } from '../errors.ts';
import { Backoff, sleep } from '../util/backoff.ts';
import { tpKey } from '../consumer/pause-control.ts';
import type { CommitTarget } from '../consumer/offset-committer.ts';
import { startGroupMember, type MemberRuntime, type MemberStrategy } from '../consumer/group-member.ts';
import { ProjectionMetrics, type ProjectionStats } from '../metrics/projection-metrics.ts';
import { claimOffset, ensureOffsetsTable } from './offset-store.ts';
import { OffsetTransactions, type PartitionBatch } from './offset-transactions.ts';
import { applyRereadBatch, type RereadBatchDeps } from './reread-batch.ts';
import { decodeBatch, rawBatch, type DecodeBatchDeps } from './decode-batch.ts';
import { FlowMinBytes } from '../consumer/flow-min-bytes.ts';
import { projectionFetchSettings, type ApplyEvents, type Projection, type ProjectionOptions, type RawProjectionOptions } from './projection-options.ts';

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

class PostgresProjection implements MemberStrategy<ProjectionStats> {
  private readonly name: string;
  private readonly groupId: string;
  private readonly logger: Logger;
  private readonly codec: EventCodec;
  /** For dead letters; none in raw mode, which dead-letters nothing. */
  private readonly producer: EventProducer | undefined;
  private readonly ownsProducer: boolean;
  private readonly deadLetterTopic: string;
  /** The events `apply` is given (canHandle); undefined: every event. */
  private readonly handles: ReadonlySet<EventName> | undefined;
  private readonly metrics: ProjectionMetrics;
  private readonly positions = new Map<string, Position>();
  private readonly backoffs = new Map<string, Backoff>();
  private readonly writes: OffsetTransactions;

  /** `raw`: messages go to `apply` undecoded (runRawProjection). */
  constructor(
    private readonly o: ProjectionOptions,
    private readonly raw: boolean,
    private readonly runtime: MemberRuntime,
    kafka: Kafka,
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
  ) {
    this.name = o.name;
    this.groupId = groupIdOf(o);
    this.logger = runtime.logger;
    this.codec = o.codec ?? o.producer?.codec ?? new EventCodec();
    this.ownsProducer = !o.producer && !raw;
    this.producer = raw ? undefined : (o.producer ?? new EventProducer({ kafka, logger: this.logger, codec: this.codec }));
    this.deadLetterTopic = o.deadLetterTopic ?? TOPICS.eventsDlq;
    this.handles = o.canHandle ? new Set(o.canHandle) : undefined;
    this.writes = new OffsetTransactions({ pool, projection: o.name, groupId: this.groupId, apply: o.apply });
    this.metrics = new ProjectionMetrics(o.metrics ?? defaultMetrics, o.name, this.groupId, () =>
      [...this.positions.values()].map((p) => ({
        topic: p.topic,
        partition: p.partition,
        nextOffset: p.next,
        highWatermark: p.highWatermark,
        paused: runtime.pauses.isPaused(p.topic, p.partition),
      })),
    );
  }

  readonly statsLine = {
    count: () => this.metrics.stats().applied,
    snapshot: () => ({ ...this.metrics.stats(), partitions: undefined }),
  };

  describe(): object {
    return { topics: this.o.topics, groupId: this.groupId };
  }

  async prepare(): Promise<void> {
    await this.waitForPostgres();
    await this.o.setup?.(this.pool);
    await this.producer?.connect();
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

  async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const { topic, partition } = batch;
    const key = tpKey(topic, partition);
    const started = performance.now();
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
          this.runtime.seek(topic, partition, pos.next);
          return;
        }
      }
      const last = batch.messages[batch.messages.length - 1]!;
      const nextAfter = BigInt(last.offset) + 1n;
      const fresh = batch.messages.filter((m) => BigInt(m.offset) >= pos.next);
      this.metrics.skipped(batch.messages.length - fresh.length);
      if (fresh.length > 0) {
        // The batch's write is a span in its first event's trace (tracing/trace-context.ts).
        const traced = () => startBatchSpan(this.name, topic, partition, fresh.map((m) => m.headers), undefined);
        await inRecordTrace(fresh[0]!.headers, traced, async (span) => {
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
            applied = share ? await this.writes.combined(own) : (await this.writes.apply([own]))[0]!;
          }
          this.metrics.applied(topic, applied);
          this.metrics.skipped(events.length - applied);
          this.metrics.batch(topic, performance.now() - started);
          if (events[0] && span.isRecording()) span.setAttributes(eventAttributes(events[0].value));
        });
      }
      if (nextAfter > pos.next) pos.next = nextAfter;
      payload.resolveOffset(last.offset);
      this.backoffs.delete(key);
    } catch (err) {
      this.retryLater(topic, partition, err);
    }
  }

  private get decodeDeps(): DecodeBatchDeps {
    return { codec: this.codec, handles: this.handles, deadLetterTopic: this.deadLetterTopic, metrics: this.metrics, logger: this.logger };
  }

  private rereadDeps(topic: string, partition: number): RereadBatchDeps {
    return {
      deliveries: this.runtime.deliveries,
      metrics: this.metrics,
      logger: this.logger,
      deadLetterTopic: this.deadLetterTopic,
      apply: async (events, nextAfter) => (await this.writes.apply([{ topic, partition, events, nextAfter, forgetDeliveries: true }]))[0]!,
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

  /** Pauses the partition and lets it fetch the same batch again after a backoff. */
  private retryLater(topic: string, partition: number, err: unknown): void {
    const key = tpKey(topic, partition);
    let backoff = this.backoffs.get(key);
    if (!backoff) this.backoffs.set(key, (backoff = new Backoff(this.o.backoff ?? { initialMs: 200, maxMs: 30_000 })));
    const delay = backoff.next();
    this.metrics.failed();
    const log = backoff.failures > 5 ? this.logger.error.bind(this.logger) : this.logger.warn.bind(this.logger);
    log({ err, topic, partition, failures: backoff.failures, retryInMs: delay }, 'projection batch failed; retrying from the same offset');
    if (!this.runtime.stopping.aborted) this.runtime.pauses.pauseUntil(topic, partition, 'backoff', Date.now() + delay);
  }

  commitTargets(): CommitTarget[] {
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

  onAssigned(assigned: ReadonlySet<string>): void {
    for (const [key, pos] of this.positions) if (!assigned.has(key)) this.runtime.pauses.forget(pos.topic, pos.partition);
    // Every partition re-reads its stored offset on its next batch: another member may have
    // moved it while it was not ours.
    this.positions.clear();
    this.metrics.assigned();
  }

  onCrash(): void {
    this.positions.clear();
  }

  async close(idle: boolean): Promise<void> {
    if (this.ownsProducer) await this.producer!.disconnect().catch((err: unknown) => this.logger.warn({ err }, 'producer disconnect failed'));
    // pool.end() waits for checked-out clients: only wait when nothing was abandoned.
    if (this.ownsPool) {
      const ended = this.pool.end().catch(() => {});
      if (idle) await ended;
    }
    this.metrics.close();
  }
}

function groupIdOf(o: ProjectionOptions): string {
  return o.groupId ?? consumerGroup(`trawl-projection-${o.name}`);
}

function start(o: ProjectionOptions, raw: boolean): Promise<Projection> {
  if (!o.name) throw new InvalidOptionError('name is required');
  if (o.topics.length === 0) throw new InvalidOptionError('topics must not be empty');
  if (typeof o.apply !== 'function') throw new InvalidOptionError('apply must be a function');
  const deadLetterTopic = o.deadLetterTopic ?? TOPICS.eventsDlq;
  if (!raw && o.topics.includes(deadLetterTopic)) throw new InvalidOptionError(`dead-letter topic ${deadLetterTopic} cannot also be projected`);
  const logger = (o.logger ?? createLogger(`projection-${o.name}`)).child({ projection: o.name });
  const kafka = o.kafka ?? createKafka({ clientId: `projection-${o.name}`, logger });
  const concurrently = o.partitionsConsumedConcurrently ?? 4;
  const pool = o.pool ?? new pg.Pool({ connectionString: o.databaseUrl ?? endpoints().databaseUrl, max: concurrently + 2, connectionTimeoutMillis: 5_000 });
  // An idle client whose server went away emits 'error' on the pool; without a listener that
  // would crash the process. The next query simply fails and is retried.
  pool.on('error', (err) => logger.warn({ err }, 'idle Postgres client failed'));
  const heartbeatIntervalMs = o.heartbeatIntervalMs ?? 3_000;
  const fetch = projectionFetchSettings(o);
  const fetchFlow = o.adaptiveFetchMinBytes ? new FlowMinBytes(fetch.minBytes, fetch.maxWaitTimeInMs) : undefined;
  return startGroupMember(
    {
      kind: 'projection',
      work: 'transactions',
      name: o.name,
      kafka,
      logger,
      consumer: {
        groupId: groupIdOf(o),
        sessionTimeout: o.sessionTimeoutMs ?? 30_000,
        heartbeatInterval: heartbeatIntervalMs,
        maxWaitTimeInMs: fetch.maxWaitTimeInMs,
        // kafkajs reads the figure at each fetch (FlowMinBytes.valueOf); its type says number.
        minBytes: fetchFlow ? (fetchFlow as unknown as number) : fetch.minBytes,
        maxBytesPerPartition: o.maxBytesPerPartition ?? 1024 * 1024,
        allowAutoTopicCreation: false,
        ...(o.partitionAssigners ? { partitionAssigners: [...o.partitionAssigners] } : {}),
      },
      subscriptions: [{ topics: o.topics, fromBeginning: true }],
      partitionsConsumedConcurrently: concurrently,
      ...((o.checkTopics ?? true) ? { requiredTopics: raw ? o.topics : [...o.topics, deadLetterTopic] } : {}),
      commitIntervalMs: o.commitIntervalMs ?? 1_000,
      heartbeatIntervalMs,
      drainTimeoutMs: o.drainTimeoutMs ?? 30_000,
      statsLogIntervalMs: o.statsLogIntervalMs ?? 60_000,
      readyWhen: 'assigned',
      ...(fetchFlow ? { fetchFlow } : {}),
      deliveries: { maxDeliveries: o.maxDeliveries, pool, backoff: o.backoff ?? { initialMs: 200, maxMs: 30_000 } },
    },
    (runtime) => new PostgresProjection(o, raw, runtime, kafka, pool, !o.pool),
  );
}

export async function runProjection(options: ProjectionOptions): Promise<Projection> {
  return start(options, false);
}

/**
 * runProjection for messages as they were read: the same exactly-once effect (offsets in the
 * transaction), positioning and retries, but no decoding and no dead-lettering — `apply` decides
 * what each message means. For projections of dead-letter topics.
 */
export async function runRawProjection(options: RawProjectionOptions): Promise<Projection> {
  return start({ ...options, apply: options.apply as unknown as ApplyEvents }, true);
}
