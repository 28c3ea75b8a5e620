/**
 * The frontier service: a projection over trawl.jobs and trawl.pages (both keyed by job id) whose
 * "read model" is the crawl state of each job, and whose side effect is the next fetch requests.
 * Offsets live in Postgres with the state, so state and progress through the log never disagree.
 */
import {
  catalogueOptions, consumerGroup, CoPartitionedAssigner, createKafka, defaultMetrics, EventCodec, startServiceProducer,
  joinedCheck, postgresCheck, readProjectionOffsets, runProjection, runService, TOPICS, watermarks,
} from '@trawl/streams';
import { sitemapLimitsFromEnv } from '@trawl/crawl';
import { createPool, CRAWL_SPEC_MIGRATIONS, CRAWL_SPECS_OWNER, migrate } from '@trawl/store';
import { DeadlineSweeper } from './deadline-sweeper.ts';
import { fetchDeadline } from './fetch-deadline.ts';
import { FRONTIER_EVENTS, FrontierProcessor } from './frontier-processor.ts';
import { FrontierStore } from './frontier-store.ts';
import { SpecWriter } from './spec-writer.ts';
import { HttpCacheReader } from './http-cache-reader.ts';
import { ReextractSource } from './reextract-source.ts';
import { FRONTIER_MIGRATIONS } from './migrations.ts';
import { registerJobMetrics } from './job-metrics.ts';

/** The projection's name: the key of its stored offsets, which the deadline's log clock reads. */
const PROJECTION = 'frontier';

await runService('frontier', async (logger) => {
  // Refused at start when it could declare a fetch lost that is still being retried.
  const deadline = fetchDeadline(catalogueOptions().fetchRetryDelaysMs);
  // The per-job bound on sitemap URLs, read with the workers' other sitemap limits (TRAWL_SITEMAP_*).
  const sitemapMaxUrls = sitemapLimitsFromEnv().maxUrls;
  const pool = createPool({ applicationName: 'trawl-frontier', max: 8 });
  const kafka = createKafka({ clientId: 'trawl-frontier', logger });
  const codec = new EventCodec();
  const producer = await startServiceProducer({ kafka, logger, codec, emits: ['FetchRequested', 'PageFailed', 'JobCompleted', 'JobFailed'] });
  const store = new FrontierStore();
  const processor = new FrontierProcessor(store, producer, logger, { specs: new SpecWriter(pool), cache: new HttpCacheReader(pool, logger), reextract: new ReextractSource(pool), sitemapMaxUrls });

  const projection = await runProjection({
    name: PROJECTION,
    groupId: consumerGroup('trawl-frontier'),
    topics: [TOPICS.jobs, TOPICS.pages],
    canHandle: FRONTIER_EVENTS,
    // Partition N of both topics on one member: a job's dispatch and its pages meet in one cache.
    partitionAssigners: [CoPartitionedAssigner],
    // TRAWL_FRONTIER_ADAPTIVE_FETCH=1: lone events (a scrape's, a crawl's first and last pages) are
    // decided as they come instead of after the fetch's wait; off by default, since between a
    // trickle and a full-pace crawl it gives up the batching the whole pipeline gains from (README).
    adaptiveFetchMinBytes: process.env.TRAWL_FRONTIER_ADAPTIVE_FETCH === '1',
    pool,
    kafka,
    logger,
    codec,
    producer,
    setup: async (db) => {
      await migrate(db, 'frontier', FRONTIER_MIGRATIONS);
      await migrate(db, CRAWL_SPECS_OWNER, CRAWL_SPEC_MIGRATIONS);
    },
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
  registerJobMetrics(defaultMetrics, pool);
  logger.info({ deadlineMs: deadline.deadlineMs, sweepEveryMs: deadline.sweepEveryMs, retryPathMs: deadline.retryPathMs }, 'fetch deadline');

  return {
    readiness: { projection: joinedCheck(projection.ready), postgres: postgresCheck(pool) },
    async stop() {
      await sweeper.stop();
      await projection.stop();
      await producer.disconnect();
      await pool.end();
    },
  };
});
