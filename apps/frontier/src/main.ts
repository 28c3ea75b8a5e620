/**
 * The frontier service: a projection over trawl.jobs and trawl.pages (both keyed by job id) whose
 * "read model" is the crawl state of each job, and whose side effect is the next fetch requests.
 * Offsets live in Postgres with the state, so state and progress through the log never disagree.
 */
import { consumerGroup, CoPartitionedAssigner, createKafka, EventCodec, EventProducer, provisionTopics, runProjection, runService, TOPICS } from '@trawl/streams';
import { createPool, migrate } from '@trawl/store';
import { FrontierProcessor } from './frontier-processor.ts';
import { FrontierStore } from './frontier-store.ts';
import { FRONTIER_MIGRATIONS } from './migrations.ts';

await runService('frontier', async (logger) => {
  const pool = createPool({ applicationName: 'trawl-frontier', max: 8 });
  const kafka = createKafka({ clientId: 'trawl-frontier', logger });
  await provisionTopics(kafka);
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  // Schemas resolved while the registry answers: a registry outage later holds up no first event.
  producer.prepare(['FetchRequested', 'JobCompleted', 'JobFailed']).catch((err: unknown) => logger.warn({ err }, 'schemas not resolved ahead; they will be on first use'));
  const processor = new FrontierProcessor(new FrontierStore(), producer, logger, { decideInPlace: process.env.TRAWL_FRONTIER_IN_PLACE !== '0' });

  const projection = await runProjection({
    name: 'frontier',
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

  return {
    async stop() {
      await projection.stop();
      await producer.disconnect();
      await pool.end();
    },
  };
});
