/**
 * The benchmark's events: ≥ 1,000,000 synthetic crawl events in dedicated topics
 * (`bench.replay.{jobs,pages,items}`, 6 partitions each), produced once through the real
 * EventProducer (Avro, registry, Kafka) and kept, so later runs — and the ClickHouse bench, which
 * generates the same topics the same way — measure replay alone. `--regenerate` starts over.
 */
import type { Kafka } from 'kafkajs';
import type { EventProducer } from '../producer/event-producer.ts';
import { provisionTopics } from '../topics/provision.ts';
import { syntheticJob } from './synthetic-crawl.ts';

interface ProjectedTopics {
  readonly jobs: string;
  readonly pages: string;
  readonly items: string;
}

export const BENCH_TOPICS: ProjectedTopics = { jobs: 'bench.replay.jobs', pages: 'bench.replay.pages', items: 'bench.replay.items' };
export const BENCH_EVENTS = 1_000_000;
/** About 1,750 events per job: 500 pages, ~1,250 items, its start and end. */
const PAGES_PER_JOB = 500;

export async function countBenchEvents(kafka: Kafka): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    let n = 0;
    for (const topic of Object.values(BENCH_TOPICS)) {
      if (!existing.has(topic)) return 0;
      for (const p of await admin.fetchTopicOffsets(topic)) n += Number(BigInt(p.high) - BigInt(p.low));
    }
    return n;
  } finally {
    await admin.disconnect();
  }
}

async function dropTopics(kafka: Kafka): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const topics = Object.values(BENCH_TOPICS).filter((t) => existing.has(t));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

const TOPIC_OF: Record<string, keyof ProjectedTopics> = {
  CrawlRequested: 'jobs', JobDispatched: 'jobs', JobCompleted: 'jobs', JobFailed: 'jobs', JobCancelled: 'jobs',
  PageFetched: 'pages', PageFailed: 'pages', ItemExtracted: 'items',
};

/** Makes sure the bench topics hold ≥ BENCH_EVENTS events; returns how many they hold and how long producing took. */
export async function ensureBenchEvents(kafka: Kafka, producer: EventProducer, { regenerate = false, log = (s: string) => process.stderr.write(`${s}\n`) } = {}): Promise<{ events: number; producedNow: number; produceSeconds: number }> {
  if (regenerate) await dropTopics(kafka);
  const have = await countBenchEvents(kafka);
  if (have >= BENCH_EVENTS) return { events: have, producedNow: 0, produceSeconds: 0 };
  if (have > 0) await dropTopics(kafka); // a half-produced set from an interrupted run
  await provisionTopics(kafka, Object.values(BENCH_TOPICS).map((name) => ({ name, role: 'event' as const, partitions: 6, key: 'job id', configs: {} })));
  log(`bench: producing ${BENCH_EVENTS.toLocaleString('en-US')}+ events into ${Object.values(BENCH_TOPICS).join(', ')} (once; later runs reuse them)`);
  const started = Date.now();
  let produced = 0;
  const runId = `bench-${started.toString(36)}`;
  for (let j = 0; produced < BENCH_EVENTS; j++) {
    const events = syntheticJob(j, { jobs: 0, pagesPerJob: PAGES_PER_JOB, seed: 42, runId, start: new Date(Date.now() - 3_600_000 + j * 1000) });
    await Promise.all(events.map((e) => producer.emit(e.name, e.body as never, { eventId: e.eventId, occurredAt: e.occurredAt, topic: BENCH_TOPICS[TOPIC_OF[e.name]!] })));
    produced += events.length;
    if (j % 50 === 0) log(`bench: ${produced.toLocaleString('en-US')} events produced`);
  }
  await producer.drain();
  return { events: produced, producedNow: produced, produceSeconds: (Date.now() - started) / 1000 };
}
