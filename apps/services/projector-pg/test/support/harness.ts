/**
 * One integration test's world on the real stack: its own topics (3 partitions each), its own
 * throw-away database, a producer, and helpers to feed events and wait for the projector.
 */
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { EventCodec, EventProducer, readEvents, type LoggedEvent } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testId, testKafka, testLogger, waitFor, type TestTopics } from '@trawl/streams/testing';
import type pg from 'pg';
import type { ProjectedTopics } from '@trawl/streams';
import type { SyntheticEvent } from '@trawl/streams/testing';

export interface Harness {
  readonly id: string;
  readonly kafka: ReturnType<typeof testKafka>;
  readonly codec: EventCodec;
  readonly producer: EventProducer;
  readonly topics: ProjectedTopics;
  readonly db: TestDatabase;
  readonly logger: ReturnType<typeof testLogger>;
  produce(events: readonly SyntheticEvent[]): Promise<void>;
  events(): Promise<LoggedEvent[]>;
  close(): Promise<void>;
}

const TOPIC_OF: Record<string, keyof ProjectedTopics> = {
  CrawlRequested: 'jobs', JobDispatched: 'jobs', JobCompleted: 'jobs', JobFailed: 'jobs', JobCancelled: 'jobs', JobPaused: 'jobs', JobResumed: 'jobs',
  PageFetched: 'pages', PageFailed: 'pages', ItemExtracted: 'items',
};

export async function createHarness(label: string): Promise<Harness> {
  await requireStack({ kafka: true, registry: true, postgres: true });
  const id = testId(label);
  const logger = testLogger(label);
  const kafka = testKafka(label, logger);
  const created: TestTopics = await createTestTopics(kafka, ['jobs', 'pages', 'items'], { runId: id, partitions: 3 });
  const topics: ProjectedTopics = { jobs: created.names.jobs!, pages: created.names.pages!, items: created.names.items! };
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  const db = await createTestDatabase('trawl_test_projpg');
  return {
    id, kafka, codec, producer, topics, db, logger,
    async produce(events) {
      await Promise.all(events.map((e) => producer.emit(e.name, e.body as never, { eventId: e.eventId, occurredAt: e.occurredAt, topic: topics[TOPIC_OF[e.name]!] })));
    },
    events: () => readEvents(kafka, codec, [topics.jobs, topics.pages, topics.items]),
    async close() {
      await producer.disconnect().catch(() => undefined);
      await db.drop().catch(() => undefined);
      await created.delete();
      await deleteSubjects(created.prefix);
    },
  };
}

/** Waits until the projection's stored offsets reach the end of every partition. */
export async function waitForCatchUp(h: Harness, pool: pg.Pool, projection: string, timeoutMs = 60_000): Promise<void> {
  const admin = h.kafka.admin();
  await admin.connect();
  try {
    const ends = new Map<string, bigint>();
    for (const topic of Object.values(h.topics)) {
      for (const p of await admin.fetchTopicOffsets(topic)) ends.set(`${topic}:${p.partition}`, BigInt(p.high));
    }
    await waitFor(
      async () => {
        const { rows } = await pool.query<{ topic: string; partition: number; next_offset: string }>(
          'SELECT topic, partition, next_offset FROM stream_offsets WHERE projection = $1', [projection],
        ).catch(() => ({ rows: [] as { topic: string; partition: number; next_offset: string }[] }));
        const stored = new Map(rows.map((r) => [`${r.topic}:${r.partition}`, BigInt(r.next_offset)]));
        return [...ends].every(([k, end]) => end === 0n || (stored.get(k) ?? 0n) >= end);
      },
      { timeoutMs, intervalMs: 200, message: `${projection} to reach the end of the topics` },
    );
  } finally {
    await admin.disconnect();
  }
}
