/**
 * Options of runEventConsumer, their defaults, and the reasoning behind each default.
 */
import type pg from 'pg';
import type { Kafka, PartitionAssigner } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventCodec } from '../registry/event-codec.ts';
import type { EventProducer } from '../producer/event-producer.ts';
import type { RetryTier } from '../retry/retry-tiers.ts';
import { validateRetryTiers } from '../retry/retry-tiers.ts';
import type { DeadLetter } from '../retry/dead-letter.ts';
import type { BackoffOptions } from '../util/backoff.ts';
import type { MetricsRegistry } from '@trawl/base';
import { TOPICS } from '../topics/catalogue.ts';
import { InvalidOptionError } from '../errors.ts';
import type { EventHandler } from './consumed-event.ts';

export interface EventConsumerOptions {
  /** Names the consumer in logs and metrics (`consumer` label); unique per process. */
  readonly name: string;
  readonly groupId: string;
  /** Source topics. Retry tier topics are subscribed as well; do not list them here. */
  readonly topics: readonly string[];
  readonly handler: EventHandler;
  readonly kafka?: Kafka;
  readonly logger?: Logger;
  /** Shared with the producer when one is given. */
  readonly codec?: EventCodec;
  /** Writes retry forwards and dead letters; one is created (and closed at stop) when absent. */
  readonly producer?: EventProducer;
  /** Where a group without committed offsets starts. Default true: a new group reads what is there. */
  readonly fromBeginning?: boolean;
  /** Handlers running at once within one partition. Default 64. */
  readonly concurrency?: number;
  /** Handlers running at once over all partitions. Default 512. */
  readonly maxConcurrency?: number;
  /** Messages with the same key never run at the same time, and run in offset order. Default false. */
  readonly keyOrdering?: boolean;
  /**
   * The handlers of one partition start in offset order, though many run at once. Without it a
   * message can reach its handler before an earlier one still being decoded (its schema fetched
   * from the registry, say). For a handler whose outcome depends on the order it is given events
   * in (projector-ch keeps the first copy of an event). Default false.
   */
  readonly startInOrder?: boolean;
  /**
   * Offsets a partition may hold between its last commit and its next fetch: the at-least-once
   * bound, i.e. the most messages a crash makes this partition deliver again. Default 1000.
   */
  readonly maxUncommittedPerPartition?: number;
  /** Accepted, unfinished messages over all partitions before partitions pause. Default 10000. */
  readonly maxBuffered?: number;
  /** Retry tiers in order (attempt n failing goes to tier n). Default none: retries happen in place. */
  readonly retryTiers?: readonly RetryTier[];
  /** Default `trawl.events.dlq`; the fetch consumer uses `trawl.fetch.dlq`. */
  readonly deadLetterTopic?: string;
  /** Called after a dead letter is written (and before its offset may be committed); retried until it succeeds. */
  readonly onDeadLetter?: (deadLetter: DeadLetter) => Promise<void> | void;
  /**
   * Deliveries without an outcome (the process died in the handler, or it overran its budget)
   * after which a message is dead-lettered as `poison`. Default TRAWL_MAX_DELIVERIES, else 3.
   */
  readonly maxDeliveries?: number;
  /** Where re-reads' deliveries are counted: a pool to share, else one made from databaseUrl (DATABASE_URL) on first use. */
  readonly pool?: pg.Pool;
  readonly databaseUrl?: string;
  /** Periodic commit. Default 1000 ms. Backpressure and rebalances commit sooner. */
  readonly commitIntervalMs?: number;
  /**
   * How long the group waits for a member that stopped heartbeating (a killed process) before its
   * partitions go to the others. Default TRAWL_SESSION_TIMEOUT_MS, else 30 s.
   */
  readonly sessionTimeoutMs?: number;
  /** Default a third of the session timeout, at most 3 s. */
  readonly heartbeatIntervalMs?: number;
  /**
   * Longest a fetch waits for data. Also how late a resumed partition (retry due, backpressure)
   * can start again, so it is lower than kafkajs's 5 s. Default 500 ms.
   */
  readonly maxWaitTimeMs?: number;
  /**
   * A fetch returns once this much data waits (or after maxWaitTimeMs). Default 1: at once.
   * A consumer that batches anyway (projector-ch) saves a fetch round per few events with more.
   */
  readonly fetchMinBytes?: number;
  /** How long stop() waits for running handlers before giving them up. Default 30 s. */
  readonly drainTimeoutMs?: number;
  /** Backoff of in-place retries (outages, handlers without tiers). */
  readonly retryBackoff?: BackoffOptions;
  readonly metrics?: MetricsRegistry;
  /** Period of the stats log line; 0 turns it off. Default 60 s. */
  readonly statsLogIntervalMs?: number;
  /** Check at start that every topic used (sources, tiers, dead letters) exists. Default true. */
  readonly checkTopics?: boolean;
  /** Group assigners, e.g. `[CoPartitionedAssigner]`; default kafkajs's round robin. */
  readonly partitionAssigners?: readonly PartitionAssigner[];
}

export interface ResolvedConsumerOptions {
  readonly concurrency: number;
  readonly maxConcurrency: number;
  readonly keyOrdering: boolean;
  readonly startInOrder: boolean;
  readonly maxUncommittedPerPartition: number;
  readonly maxBuffered: number;
  readonly retryTiers: readonly RetryTier[];
  readonly deadLetterTopic: string;
  readonly fromBeginning: boolean;
  readonly commitIntervalMs: number;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly maxWaitTimeMs: number;
  readonly fetchMinBytes: number;
  readonly drainTimeoutMs: number;
  readonly retryBackoff: BackoffOptions;
  readonly statsLogIntervalMs: number;
  readonly checkTopics: boolean;
}

function positiveInt(name: string, value: number | undefined, dflt: number): number {
  const v = value ?? dflt;
  if (!Number.isSafeInteger(v) || v < 1) throw new InvalidOptionError(`${name} must be a positive integer, got ${value}`);
  return v;
}

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? undefined : Number(raw);
}

export function resolveConsumerOptions(o: EventConsumerOptions): ResolvedConsumerOptions {
  if (!o.name) throw new InvalidOptionError('name is required');
  if (!o.groupId) throw new InvalidOptionError('groupId is required');
  if (o.topics.length === 0) throw new InvalidOptionError('topics must not be empty');
  if (typeof o.handler !== 'function') throw new InvalidOptionError('handler must be a function');
  // keyOrdering holds a message behind its key, so launches leave offset order, which startInOrder's hand-off follows.
  if (o.startInOrder && o.keyOrdering) throw new InvalidOptionError('startInOrder and keyOrdering cannot be combined');
  const retryTiers = o.retryTiers ?? [];
  validateRetryTiers(retryTiers, o.topics);
  const deadLetterTopic = o.deadLetterTopic ?? TOPICS.eventsDlq;
  if ([...o.topics, ...retryTiers.map((t) => t.topic)].includes(deadLetterTopic)) {
    throw new InvalidOptionError(`dead-letter topic ${deadLetterTopic} cannot also be consumed`);
  }
  const sessionTimeoutMs = positiveInt('sessionTimeoutMs', o.sessionTimeoutMs ?? envInt('TRAWL_SESSION_TIMEOUT_MS'), 30_000);
  const heartbeatIntervalMs = positiveInt('heartbeatIntervalMs', o.heartbeatIntervalMs, Math.min(3_000, Math.floor(sessionTimeoutMs / 3)));
  if (heartbeatIntervalMs >= sessionTimeoutMs) throw new InvalidOptionError('heartbeatIntervalMs must be below sessionTimeoutMs');
  const concurrency = positiveInt('concurrency', o.concurrency, 64);
  return {
    concurrency,
    maxConcurrency: positiveInt('maxConcurrency', o.maxConcurrency, Math.max(512, concurrency)),
    keyOrdering: o.keyOrdering ?? false,
    startInOrder: o.startInOrder ?? false,
    maxUncommittedPerPartition: positiveInt('maxUncommittedPerPartition', o.maxUncommittedPerPartition, Math.max(1000, concurrency)),
    maxBuffered: positiveInt('maxBuffered', o.maxBuffered, 10_000),
    retryTiers,
    deadLetterTopic,
    fromBeginning: o.fromBeginning ?? true,
    commitIntervalMs: positiveInt('commitIntervalMs', o.commitIntervalMs, 1_000),
    sessionTimeoutMs,
    heartbeatIntervalMs,
    maxWaitTimeMs: positiveInt('maxWaitTimeMs', o.maxWaitTimeMs, 500),
    fetchMinBytes: positiveInt('fetchMinBytes', o.fetchMinBytes, 1),
    drainTimeoutMs: positiveInt('drainTimeoutMs', o.drainTimeoutMs, 30_000),
    retryBackoff: o.retryBackoff ?? { initialMs: 200, maxMs: 30_000 },
    statsLogIntervalMs: o.statsLogIntervalMs ?? 60_000,
    checkTopics: o.checkTopics ?? true,
  };
}
