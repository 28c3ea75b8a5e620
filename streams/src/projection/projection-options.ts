/**
 * The public shape of a projection: what `apply` receives, the options of runProjection, and the
 * handle it returns.
 */
import type pg from 'pg';
import type { Kafka, PartitionAssigner } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import type { EventCodec } from '../registry/event-codec.ts';
import type { EventProducer } from '../producer/event-producer.ts';
import type { BackoffOptions } from '../util/backoff.ts';
import type { MetricsRegistry } from '@trawl/base';
import type { ProjectionStats } from '../metrics/projection-metrics.ts';
import type { ReadEvent, ReadEventOf } from '../consumer/consumed-event.ts';
import { InvalidOptionError } from '../errors.ts';

/** What `apply` receives: an event with its place in the log. */
export type ProjectedEventOf<N extends EventName> = ReadEventOf<N>;

export type ProjectedEvent = ReadEvent;

/**
 * Applies events inside the given transaction: one partition's, in offset order — or, with
 * `combinePartitions`, several partitions' (of any of the topics), each in offset order, one
 * partition after another.
 */
export type ApplyEvents = (events: readonly ProjectedEvent[], tx: pg.PoolClient) => Promise<void>;

export interface ProjectionOptions {
  /** The projection's name: the key of its offsets, and its default group id. */
  readonly name: string;
  readonly topics: readonly string[];
  readonly apply: ApplyEvents;
  /**
   * The events `apply` handles (emmett's `canHandle`); the others are never given to it, and their
   * bodies are not decoded (the schema id names the event), but their offsets move with their batch.
   * Default: every event.
   */
  readonly canHandle?: readonly EventName[];
  /** Creates the read model's tables; runs once at start, after the offsets table exists. */
  readonly setup?: (db: pg.Pool) => Promise<void>;
  /** A pool to use (not closed at stop); else one is made from databaseUrl and closed at stop. */
  readonly pool?: pg.Pool;
  readonly databaseUrl?: string;
  /** Default `trawl-projection-<name>`, under TRAWL_TOPIC_PREFIX like every group (consumerGroup()). */
  readonly groupId?: string;
  readonly kafka?: Kafka;
  readonly logger?: Logger;
  readonly codec?: EventCodec;
  /** For dead letters; one is created (and closed at stop) when absent. */
  readonly producer?: EventProducer;
  /** Default `trawl.events.dlq`. */
  readonly deadLetterTopic?: string;
  /** Caps a fetch per partition, and so a transaction's size. Default 1 MiB (kafkajs's). */
  readonly maxBytesPerPartition?: number;
  /** Partitions applied at the same time (each in its own transaction). Default 4. */
  readonly partitionsConsumedConcurrently?: number;
  /**
   * Group commit: batches of several partitions that arrive together (one fetch hands each
   * partition's batch over separately) go in one transaction, their offset rows locked and moved
   * together; while it runs, the next batches queue for the one after. Fewer, larger transactions:
   * worth it when a transaction's fixed cost (a dozen statements) dominates and the partitions'
   * events touch the same rows (a job's events on the jobs, pages and items topics all update its
   * job row, so separate transactions would queue on that row anyway). A partition whose batch
   * failed is retried in a transaction of its own. Default false: one transaction per partition's
   * batch, up to partitionsConsumedConcurrently at once.
   */
  readonly combinePartitions?: boolean;
  /**
   * Deliveries without an outcome (the process died applying the event) after which an event is
   * dead-lettered as `poison` and skipped. Default TRAWL_MAX_DELIVERIES, else 3.
   */
  readonly maxDeliveries?: number;
  /** Retry backoff after a failed batch. Default 200 ms doubling to 30 s. */
  readonly backoff?: BackoffOptions;
  readonly metrics?: MetricsRegistry;
  /** Period of the stats log line; 0 turns it off. Default 60 s. */
  readonly statsLogIntervalMs?: number;
  /** Group commits (a convenience). Default 1000 ms. */
  readonly commitIntervalMs?: number;
  readonly sessionTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  /**
   * A fetch waits at the broker until it can return this many bytes, or maxWaitTimeMs has passed.
   * Each batch is a transaction of about a dozen statements, so batches of a few events (what a
   * steady flow gives with kafkajs's 1 byte) pay them per few events. Default
   * TRAWL_PROJECTION_FETCH_MIN_BYTES, else 64 KiB.
   */
  readonly fetchMinBytes?: number;
  /**
   * The longest a fetch waits for fetchMinBytes: the added latency when events trickle, e.g. the
   * last events of a crawl. Default TRAWL_PROJECTION_FETCH_MAX_WAIT_MS, else 50 (a steady crawl
   * fills 64 KiB in about that time anyway; 200 made a crawl's end wait ~150 ms longer per hop).
   */
  readonly maxWaitTimeMs?: number;
  /**
   * Ask for fetchMinBytes only while the flow fills half of it per maxWaitTimeMs, else for 1 byte
   * (consumer/flow-min-bytes.ts): a trickle's events are applied as they come instead of waiting
   * maxWaitTimeMs each, a full-pace flow is batched as before, an idle one polls as before; a
   * middling flow loses its batching. The frontier's opt-in (TRAWL_FRONTIER_ADAPTIVE_FETCH=1).
   * Default false.
   */
  readonly adaptiveFetchMinBytes?: boolean;
  /** How long stop() waits for running transactions. Default 30 s; after it they are abandoned (rolled back). */
  readonly drainTimeoutMs?: number;
  /** How long start waits for Postgres before giving up. Default 60 s. */
  readonly startTimeoutMs?: number;
  /** Check at start that the topics exist. Default true. */
  readonly checkTopics?: boolean;
  /**
   * Group assigners. The frontier passes `[CoPartitionedAssigner]` so that partition N of
   * trawl.jobs and of trawl.pages land on the same member. Default kafkajs's round robin.
   */
  readonly partitionAssigners?: readonly PartitionAssigner[];
}

/** A message as it was read, undecoded: what a raw projection's `apply` receives (runRawProjection). */
export interface ProjectedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly timestamp: string;
}

/** Applies raw messages inside the given transaction, with the same ordering as ApplyEvents. */
export type ApplyMessages = (messages: readonly ProjectedMessage[], tx: pg.PoolClient) => Promise<void>;

/**
 * A projection that decodes (or not) for itself: nothing is dead-lettered, so it may read
 * dead-letter topics, whose messages are often undecodable and must be kept all the same.
 */
export interface RawProjectionOptions extends Omit<ProjectionOptions, 'apply' | 'canHandle' | 'codec' | 'producer' | 'deadLetterTopic'> {
  readonly apply: ApplyMessages;
}

export interface Projection {
  readonly name: string;
  readonly groupId: string;
  /** Resolves when partitions were assigned the first time. */
  readonly ready: Promise<void>;
  stats(): ProjectionStats;
  /** Stops fetching, lets running transactions finish, commits to the group, leaves it. */
  stop(): Promise<void>;
}

/** A projection's fetch settings: the options, else the environment, else the defaults. */
export function projectionFetchSettings(
  o: Pick<ProjectionOptions, 'fetchMinBytes' | 'maxWaitTimeMs'>,
  env: NodeJS.ProcessEnv = process.env,
): { readonly minBytes: number; readonly maxWaitTimeInMs: number } {
  const pick = (name: string, option: number | undefined, envName: string, fallback: number): number => {
    const raw = option ?? (env[envName] === undefined || env[envName] === '' ? fallback : Number(env[envName]));
    if (!Number.isInteger(raw) || raw < 1) throw new InvalidOptionError(`${name} must be a positive integer (${option === undefined ? envName : name}: ${String(option ?? env[envName])})`);
    return raw;
  };
  return {
    minBytes: pick('fetchMinBytes', o.fetchMinBytes, 'TRAWL_PROJECTION_FETCH_MIN_BYTES', 64 * 1024),
    maxWaitTimeInMs: pick('maxWaitTimeMs', o.maxWaitTimeMs, 'TRAWL_PROJECTION_FETCH_MAX_WAIT_MS', 50),
  };
}
