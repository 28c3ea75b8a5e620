/**
 * The frontier service: a projection over trawl.jobs and trawl.pages (both keyed by job id) whose
 * "read model" is the crawl state of each job, and whose side effect is the next fetch requests.
 * Offsets live in Postgres with the state, so state and progress through the log never disagree.
 */
import {
  catalogueOptions, consumerGroup, CoPartitionedAssigner, createKafka, EventCodec, EventProducer, provisionTopics,
  readProjectionOffsets, runProjection, runService, TOPICS, watermarks,
} from '@trawl/streams';
import { createPool, migrate } from '@trawl/store';
import { DeadlineSweeper } from './deadline-sweeper.ts';
import { fetchDeadline } from './fetch-deadline.ts';
import { FrontierProcessor } from './frontier-processor.ts';
import { FrontierStore } from './frontier-store.ts';
import { FRONTIER_MIGRATIONS } from './migrations.ts';

/** The projection's name: the key of its stored offsets, which the deadline's log clock reads. */
const PROJECTION = 'frontier';

await runService('frontier', async (logger) => {
  // Refused at start when it could declare a fetch lost that is still being retried.
  const deadline = fetchDeadline(catalogueOptions().fetchRetryDelaysMs);
  const pool = createPool({ applicationName: 'trawl-frontier', max: 8 });
  const kafka = createKafka({ clientId: 'trawl-frontier', logger });
  await provisionTopics(kafka);
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  // Schemas resolved while the registry answers: a registry outage later holds up no first event.
  producer.prepare(['FetchRequested', 'PageFailed', 'JobCompleted', 'JobFailed']).catch((err: unknown) => logger.warn({ err }, 'schemas not resolved ahead; they will be on first use'));
  const store = new FrontierStore();
  const processor = new FrontierProcessor(store, producer, logger, { decideInPlace: process.env.TRAWL_FRONTIER_IN_PLACE !== '0' });

  const projection = await runProjection({
    name: PROJECTION,
    groupId: consumerGroup('trawl-frontier'),
    topics: [TOPICS.jobs, TOPICS.pages],
    // Partition N of both topics on one member: a job's dispatch and its pages meet in one cache.
    partitionAssigners: [CoPartitionedAssigner],
    pool,
    kafka,
    logger,
    codec,
    producer,
    setup: (db) => migrate(db, 'frontier', FRONTIER_MIGRATIONS).then(() => undefined),
    apply: async (events, tx) => {
      await processor.apply(events, tx);
    },
  });

  const sweeper = new DeadlineSweeper({
    pool,
    store,
    processor,
    logger,
    deadlineMs: deadline.deadlineMs,
    sweepEveryMs: deadline.sweepEveryMs,
    pagesEnd: async () => new Map((await watermarks(kafka, [TOPICS.pages])).map((w) => [w.partition, w.high])),
    pagesApplied: async () =>
      new Map((await readProjectionOffsets(pool, PROJECTION)).filter((o) => o.topic === TOPICS.pages).map((o) => [o.partition, o.nextOffset])),
  });
  sweeper.start();
  logger.info({ deadlineMs: deadline.deadlineMs, sweepEveryMs: deadline.sweepEveryMs, retryPathMs: deadline.retryPathMs }, 'fetch deadline');

  return {
    async stop() {
      await sweeper.stop();
      await projection.stop();
      await producer.disconnect();
      await pool.end();
    },
  };
});
