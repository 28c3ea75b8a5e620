/**
 * The live analytics projector: a streams consumer whose handler hands each event to the
 * Flusher and resolves when its flush is stored. Offsets are committed to the Kafka group only
 * for stored events, so a crash re-delivers what was not stored; the facts' positions make sure
 * what was stored is not stored again.
 *
 * The consumer holds up to `maxBuffered` events in flight, which is what lets the Flusher build
 * large batches (ClickHouse prefers few large inserts) and what pauses the partitions while
 * ClickHouse is away.
 */
import { runEventConsumer, type EventCodec, type EventConsumer, type Logger, type createKafka } from '@trawl/streams';
import { consumerGroup, endpoints, projectionFetchSettings } from '@trawl/streams';
import { Backoff, sleep } from '@trawl/streams';
import { ClickHouse, checkDatabaseName } from '@trawl/clickhouse';
import { setupAnalytics } from '../schema/analytics-schema.ts';
import { DEFAULT_PROJECTED_TOPICS, projectedTopicList, type ProjectedTopics } from '@trawl/streams';
import { projectionName } from '../version.ts';
import { analyticsCodec } from '../model/fact-rows.ts';
import { TrawlError } from '@trawl/schemas';
import type { ProjectionSupersededError } from '../errors.ts';
import { Flusher, type FlusherStats } from './flusher.ts';
import { NO_SWAP_LOCK, PgSwapLock, type SwapLock } from './swap-lock.ts';

type Kafka = ReturnType<typeof createKafka>;

export interface ChProjectorOptions {
  readonly clickhouseUrl?: string;
  readonly database?: string;
  /** Postgres for the swap lock; `null` runs without one (no replay while this runs). */
  readonly databaseUrl?: string | null;
  readonly kafka?: Kafka;
  /** Default: `analyticsCodec()`, which decodes only the fields the facts keep. */
  readonly codec?: EventCodec;
  readonly logger: Logger;
  readonly topics?: ProjectedTopics;
  readonly groupId?: string;
  readonly maxRows?: number;
  readonly maxDelayMs?: number;
  /** Flush once no event arrived for this long (Flusher). Default 200; 0 turns it off. */
  readonly quietMs?: number;
  readonly onSuperseded?: (err: ProjectionSupersededError) => void;
  readonly statsLogIntervalMs?: number;
}

export interface ChProjector {
  readonly consumer: EventConsumer;
  stats(): FlusherStats;
  stop(): Promise<void>;
}

/** Waits for ClickHouse and sets the schema up; retries while it is away, fails on a refusal that will not pass. */
async function setupWhenReachable(ch: ClickHouse, logger: Logger, signal?: AbortSignal): Promise<void> {
  const backoff = new Backoff({ initialMs: 200, maxMs: 10_000 });
  for (;;) {
    try {
      await setupAnalytics(ch);
      return;
    } catch (err) {
      if (err instanceof TrawlError && !err.retriable) throw err;
      const delay = backoff.next();
      logger.warn({ err, retryInMs: delay }, 'ClickHouse not reachable yet; waiting');
      await sleep(delay, signal);
      if (signal?.aborted) throw err;
    }
  }
}

export async function startChProjector(o: ChProjectorOptions): Promise<ChProjector> {
  const ep = endpoints();
  const ch = new ClickHouse({ url: o.clickhouseUrl ?? ep.clickhouseUrl, database: checkDatabaseName(o.database ?? ep.clickhouseDatabase) });
  const lock: SwapLock = o.databaseUrl === null ? NO_SWAP_LOCK : new PgSwapLock(o.databaseUrl ?? ep.databaseUrl);
  await setupWhenReachable(ch, o.logger);
  const flusher = new Flusher({
    ch, lock, logger: o.logger,
    ...(o.maxRows ? { maxRows: o.maxRows } : {}),
    ...(o.maxDelayMs ? { maxDelayMs: o.maxDelayMs } : {}),
    ...(o.quietMs !== undefined ? { quietMs: o.quietMs } : {}),
    ...(o.onSuperseded ? { onSuperseded: o.onSuperseded } : {}),
  });
  const maxRows = o.maxRows ?? 20_000;
  const fetch = projectionFetchSettings({});
  let consumer: EventConsumer;
  try {
    consumer = await runEventConsumer({
      name: 'projector-ch',
      groupId: o.groupId ?? consumerGroup(`trawl-projection-${projectionName()}`),
      topics: projectedTopicList(o.topics ?? DEFAULT_PROJECTED_TOPICS),
      ...(o.kafka ? { kafka: o.kafka } : {}),
      codec: o.codec ?? analyticsCodec(),
      logger: o.logger,
      // Handlers only wait for their flush: many may wait at once, so batches can fill. They start in
      // offset order: a flush keeps the first copy of an event by its place in the batch.
      concurrency: maxRows,
      startInOrder: true,
      maxConcurrency: maxRows * 3,
      maxUncommittedPerPartition: maxRows,
      maxBuffered: maxRows * 3,
      drainTimeoutMs: 15_000,
      // A projection's fetch settings (64 KiB or 50 ms; TRAWL_PROJECTION_FETCH_*): the flusher
      // batches anyway, and fetches of a few events each cost ~15% of this process's CPU.
      fetchMinBytes: fetch.minBytes,
      maxWaitTimeMs: fetch.maxWaitTimeInMs,
      ...(o.statsLogIntervalMs !== undefined ? { statsLogIntervalMs: o.statsLogIntervalMs } : {}),
      handler: (e) => flusher.add({ topic: e.topic, partition: e.partition, offset: BigInt(e.offset), name: e.name, value: e.value }),
    });
  } catch (err) {
    flusher.close();
    await lock.close();
    await ch.close();
    throw err;
  }
  return {
    consumer,
    stats: () => flusher.stats(),
    async stop() {
      // The consumer's drain waits for running handlers, i.e. for the flushes that carry them.
      const draining = flusher.drain();
      await consumer.stop();
      flusher.close();
      await draining.catch(() => undefined);
      await lock.close();
      await ch.close();
    },
  };
}
