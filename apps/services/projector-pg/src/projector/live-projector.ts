/**
 * The live Postgres projector: runProjection (offsets in the same transaction as the rows) with
 * the read-model batch as its `apply`. Each batch first takes the swap lock shared — so a replay
 * can hold batches back while it renames tables — and then checks that the live tables still
 * belong to its version: after a replay of a newer version swapped in, this projector must not
 * write another row (ProjectionSupersededError; the batch rolls back and `onSuperseded` fires).
 */
import type pg from 'pg';
import { runProjection, type EventCodec, type Logger, type MetricsRegistry, type Projection, type createKafka } from '@trawl/streams';
import { applyBatch } from './apply-batch.ts';
import { PROJECTED_EVENTS } from '../model/plan-batch.ts';
import { SHARED_SWAP_LOCK_SQL } from '../sql/locks.ts';
import { LIVE_TABLES } from '../sql/tables.ts';
import { liveVersion, setupReadModels } from '../sql/read-model-setup.ts';
import { PROJECTION_VERSION, projectionName } from '../version.ts';
import { ProjectionSupersededError } from '../errors.ts';
import { DEFAULT_PROJECTED_TOPICS, projectedTopicList, type ProjectedTopics } from '@trawl/streams';

type Kafka = ReturnType<typeof createKafka>;

export interface PgProjectorOptions {
  readonly pool?: pg.Pool;
  readonly databaseUrl?: string;
  readonly kafka?: Kafka;
  readonly codec?: EventCodec;
  readonly logger?: Logger;
  readonly topics?: ProjectedTopics;
  readonly groupId?: string;
  readonly partitionsConsumedConcurrently?: number;
  readonly metrics?: MetricsRegistry;
  readonly statsLogIntervalMs?: number;
  /** How long start waits for Postgres. Default 10 minutes: a projector started with its database down waits for it. */
  readonly startTimeoutMs?: number;
  /** Called once when a newer version took over the tables; the service should stop. */
  readonly onSuperseded?: (err: ProjectionSupersededError) => void;
}

export async function startPgProjector(options: PgProjectorOptions = {}): Promise<Projection> {
  let superseded = false;
  return runProjection({
    name: projectionName(),
    topics: projectedTopicList(options.topics ?? DEFAULT_PROJECTED_TOPICS),
    canHandle: PROJECTED_EVENTS,
    ...(options.pool ? { pool: options.pool } : {}),
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.kafka ? { kafka: options.kafka } : {}),
    ...(options.codec ? { codec: options.codec } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.groupId ? { groupId: options.groupId } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.statsLogIntervalMs !== undefined ? { statsLogIntervalMs: options.statsLogIntervalMs } : {}),
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 4,
    // A job's events on the jobs, pages and items topics all update its job row: one transaction for them (streams' group commit).
    combinePartitions: true,
    startTimeoutMs: options.startTimeoutMs ?? 10 * 60_000,
    setup: async (pool) => {
      await setupReadModels(pool);
    },
    apply: async (events, tx) => {
      // Two statements on purpose: under READ COMMITTED the version must be read by a statement
      // that starts after the lock is granted, or it could predate a swap that just committed.
      await tx.query(SHARED_SWAP_LOCK_SQL);
      const version = await liveVersion(tx);
      if (version !== PROJECTION_VERSION) {
        const err = new ProjectionSupersededError(`the live read models are now version ${version}; this projector writes version ${PROJECTION_VERSION}`);
        if (!superseded) {
          superseded = true;
          options.onSuperseded?.(err);
        }
        throw err;
      }
      await applyBatch(tx, LIVE_TABLES, events);
    },
  });
}
