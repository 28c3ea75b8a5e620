/**
 * One integration test's world on the real stack: its own topics (3 partitions each), its own
 * ClickHouse database (dropped afterwards), its own Postgres database for the swap lock (advisory
 * locks are per database, so tests never pause a projector running on the same machine), and a
 * producer.
 */
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { endpoints, EventCodec, EventProducer, readEvents, type LoggedEvent } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testId, testKafka, testLogger, waitFor, type TestTopics } from '@trawl/streams/testing';
import { ClickHouse, ident } from '@trawl/clickhouse';
import type { ProjectedTopics } from '@trawl/streams';
import type { SyntheticEvent } from '@trawl/streams/testing';

export interface Harness {
  readonly id: string;
  readonly kafka: ReturnType<typeof testKafka>;
  readonly codec: EventCodec;
  readonly producer: EventProducer;
  readonly topics: ProjectedTopics;
  readonly pg: TestDatabase;
  readonly ch: ClickHouse;
  readonly clickhouseUrl: string;
  readonly logger: ReturnType<typeof testLogger>;
  produce(events: readonly SyntheticEvent[]): Promise<void>;
  events(): Promise<LoggedEvent[]>;
  /**
   * Waits until the live projector (group `projector-ch-<id>`, as the tests name it, or the one
   * given) has committed every message of the topics: each one stored, or recognised as stored already.
   */
  waitForCatchUp(timeoutMs?: number, groupId?: string): Promise<void>;
  close(): Promise<void>;
}

const TOPIC_OF: Record<string, keyof ProjectedTopics> = {
  CrawlRequested: 'jobs', JobDispatched: 'jobs', JobCompleted: 'jobs', JobFailed: 'jobs', JobCancelled: 'jobs', JobPaused: 'jobs', JobResumed: 'jobs',
  PageFetched: 'pages', PageFailed: 'pages', ItemExtracted: 'items',
};

export async function createHarness(label: string): Promise<Harness> {
  await requireStack({ kafka: true, registry: true, postgres: true });
  const clickhouseUrl = endpoints().clickhouseUrl;
  const database = `trawl_test_${randomBytes(4).toString('hex')}`;
  const ch = new ClickHouse({ url: clickhouseUrl, database });
  if (!(await ch.ping())) {
    await ch.close();
    throw new Error(`ClickHouse at ${clickhouseUrl} does not answer: start the local stack with \`npm run stack -- up\``);
  }
  const id = testId(label);
  const logger = testLogger(label);
  const kafka = testKafka(label, logger);
  const created: TestTopics = await createTestTopics(kafka, ['jobs', 'pages', 'items'], { runId: id, partitions: 3 });
  const topics: ProjectedTopics = { jobs: created.names.jobs!, pages: created.names.pages!, items: created.names.items! };
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  const pg = await createTestDatabase('trawl_test_projch');
  const admin = kafka.admin();
  const h: Harness = {
    id, kafka, codec, producer, topics, pg, ch, clickhouseUrl, logger,
    async produce(events) {
      await Promise.all(events.map((e) => producer.emit(e.name, e.body as never, { eventId: e.eventId, occurredAt: e.occurredAt, topic: topics[TOPIC_OF[e.name]!] })));
    },
    events: () => readEvents(kafka, codec, [topics.jobs, topics.pages, topics.items]),
    async waitForCatchUp(timeoutMs = 60_000, groupId = `projector-ch-${id}`) {
      await admin.connect();
      const ends = new Map<string, bigint>();
      for (const topic of Object.values(topics)) for (const p of await admin.fetchTopicOffsets(topic)) ends.set(`${topic}:${p.partition}`, BigInt(p.high));
      await waitFor(async () => {
        const committed = await admin.fetchOffsets({ groupId, topics: Object.values(topics) });
        const at = new Map<string, bigint>(committed.flatMap((t) => t.partitions.map((p) => [`${t.topic}:${p.partition}`, BigInt(p.offset)] as const)));
        return [...ends].every(([k, end]) => end === 0n || (at.get(k) ?? -1n) >= end);
      }, { timeoutMs, intervalMs: 250, message: 'the projector to commit every message' });
    },
    async close() {
      await admin.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
      await ch.exec(`DROP DATABASE IF EXISTS ${ident(database)}`, { database: null }).catch(() => undefined);
      await ch.close();
      await pg.drop().catch(() => undefined);
      await created.delete();
      await deleteSubjects(created.prefix);
    },
  };
  return h;
}
