/**
 * Replay equivalence as a property, against the real ClickHouse (and Kafka for the end-to-end part):
 * for generated logs holding what at-least-once delivery puts in a real one (re-emitted copies of
 * every kind of event at other offsets, with other times and figures; fetches ended twice;
 * out-of-order job and page events; cancelled and running jobs; pauses and resumes), the pure model
 * (which positions are facts), the live write path and the replay's write path store the same
 * facts, the analytics checksums — facts and rollups — are equal, and so are the jobs' run times
 * with their paused time left out (`jobRunTimes`), which equal what the log says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { endpoints } from '@trawl/streams';
import { atLeastOnceLog, consumerOrder, decoded, placeInPartitions, prng, testLogger, type PlacedRecord } from '@trawl/streams/testing';
import { ClickHouse, ident } from '@trawl/clickhouse';
import { applySchema } from '../src/schema/analytics-schema.ts';
import { FACT_TABLES, type FactTable, type PositionedEvent } from '../src/model/fact-rows.ts';
import { UserMemory } from '../src/model/tsv-batch.ts';
import { DEDUPE_WINDOW } from '../src/model/event-identity.ts';
import { EventIdMemory } from '../src/projector/event-id-memory.ts';
import { writeFacts } from '../src/projector/write-facts.ts';
import { ShadowWriter } from '../src/replay/shadow-writer.ts';
import { analyticsChecksum, checksumDifferences } from '../src/queries/consistency.ts';
import { startChProjector, type ChProjector } from '../src/projector/live-projector.ts';
import { replayCh } from '../src/replay/replay-ch.ts';
import { jobRunTimes } from '../src/queries/job-run-times.ts';
import { createHarness, type Harness } from './support/harness.ts';
import { expectedFacts, expectedRunTimes, factKey } from './support/oracle.ts';

/** Generated logs of the ClickHouse-only property; TRAWL_PROPERTY_RUNS sets it. */
const RUNS = Number(process.env.TRAWL_PROPERTY_RUNS ?? 12);
/** Logs produced to Kafka and replayed by replayCh next to a live projector. */
const KAFKA_RUNS = Number(process.env.TRAWL_PROPERTY_KAFKA_RUNS ?? 4);

const TOPIC_OF_TABLE: Readonly<Record<FactTable, string>> = { job_events: 'jobs', page_fetches: 'pages', items: 'items' };
const positioned = (r: PlacedRecord): PositionedEvent => ({ ...decoded(r.event), topic: r.topic, partition: r.partition, offset: r.offset });

function batches<T>(xs: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  for (let i = 0, b = 0; i < xs.length; b++) {
    const n = Math.max(1, sizes[b % sizes.length]!);
    out.push(xs.slice(i, i + n));
    i += n;
  }
  return out;
}

/** Every fact's place, as `topic:partition:offset` with the topic named by its table. */
async function storedFacts(ch: ClickHouse, topics: Readonly<Record<FactTable, string>> = TOPIC_OF_TABLE): Promise<Set<string>> {
  const out = new Set<string>();
  for (const table of FACT_TABLES) {
    for (const r of await ch.rows<{ p: number; o: string }>(`SELECT _partition AS p, toString(_offset) AS o FROM ${ident(table)} FINAL`)) out.add(factKey(topics[table], Number(r.p), BigInt(r.o)));
  }
  return out;
}

describe('replay equivalence on ClickHouse', () => {
  const url = endpoints().clickhouseUrl;
  const made: ClickHouse[] = [];
  const database = async (): Promise<ClickHouse> => {
    const ch = new ClickHouse({ url, database: `trawl_test_eq_${randomBytes(4).toString('hex')}` });
    await ch.exec(`CREATE DATABASE ${ident(ch.database)}`, { database: null });
    await applySchema(ch);
    made.push(ch);
    return ch;
  };
  const drop = async (ch: ClickHouse) => {
    await ch.exec(`DROP DATABASE IF EXISTS ${ident(ch.database)}`, { database: null }).catch(() => undefined);
    await ch.close();
  };
  afterAll(async () => {
    for (const ch of made) await drop(ch);
  });

  it(`the pure model, the live write path and the replay's write path store the same facts and rollups (${RUNS} generated logs, small windows and the default)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 3 }),
        fc.tuple(fc.integer(), fc.integer()),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        fc.oneof(fc.bigInt({ min: 0n, max: 30n }), fc.constant(DEFAULT_WINDOW)),
        async (seed, partitions, orders, sizes, window) => {
          const log = placeInPartitions(atLeastOnceLog({ seed, copyRate: 0.4, pauses: true }), partitions);
          const expected = expectedFacts(log.map((r) => ({ topic: r.topic, partition: r.partition, offset: r.offset, event_id: r.event.eventId })), window);
          const [live, replay] = [await database(), await database()];
          try {
            // Live: flushes of any size through the position and id checks against ClickHouse; each
            // batch also goes in twice, as a retried flush or a redelivery would.
            const users = new UserMemory();
            for (const b of batches(consumerOrder(log, orders[0]).map(positioned), sizes)) {
              await writeFacts(live, b, users, { skipStored: true, dedupeWindow: window });
              await writeFacts(live, b, users, { skipStored: true, dedupeWindow: window });
            }
            // Replay: chunks through the ShadowWriter and its memories.
            const writer = new ShadowWriter({
              shadow: replay, users: new UserMemory(), logger: testLogger('equivalence'), eventsPerInsert: 25,
              eventIds: { job_events: new EventIdMemory(window), page_fetches: new EventIdMemory(window), items: new EventIdMemory(window) },
            });
            for (const b of batches(consumerOrder(log, orders[1]).map(positioned), sizes)) await writer.add(b);
            await writer.flush();
            expect(await storedFacts(live)).toEqual(expected);
            expect(await storedFacts(replay)).toEqual(expected);
            expect(checksumDifferences(await analyticsChecksum(live), await analyticsChecksum(replay))).toEqual([]);
            // Run times with pauses left out: the same from both, and as the log says.
            const runTimes = expectedRunTimes(log.filter((r) => r.topic === 'jobs').map((r) => ({ partition: r.partition, offset: r.offset, event: decoded(r.event) })), NOW);
            expect(await jobRunTimes(live, undefined, NOW_DATE)).toEqual(runTimes);
            expect(await jobRunTimes(replay, undefined, NOW_DATE)).toEqual(runTimes);
          } finally {
            made.splice(made.indexOf(live), 1);
            made.splice(made.indexOf(replay), 1);
            await drop(live);
            await drop(replay);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});

const DEFAULT_WINDOW = DEDUPE_WINDOW;
/** The clock a still-paused job's pause is counted to: after every generated log's events. */
const NOW_DATE = new Date(Date.UTC(2026, 3, 1));
const NOW = NOW_DATE.getTime() / 1_000;

describe('replay equivalence end to end (Kafka, live projector, replayCh)', () => {
  let h: Harness;
  let projector: ChProjector | undefined;

  beforeAll(async () => {
    h = await createHarness('equivch');
  });
  afterAll(async () => {
    await projector?.stop();
    await h?.close();
  });

  const startLive = (group: string) =>
    startChProjector({
      clickhouseUrl: h.clickhouseUrl, database: h.ch.database, databaseUrl: h.pg.url, kafka: h.kafka, logger: h.logger,
      topics: h.topics, groupId: `projector-ch-${h.id}${group}`, maxRows: 1000, maxDelayMs: 100, statsLogIntervalMs: 0,
    });

  it(`replays logs holding re-emitted copies to the live analytics' checksums, with the facts the pure model names (${KAFKA_RUNS} generated logs)`, async () => {
    const rnd = prng(20261126);
    let copies = 0;
    let group = '';
    projector = await startLive(group);
    for (let run = 0; run < KAFKA_RUNS; run++) {
      const seed = 1 + Math.floor(rnd() * 2 ** 30);
      const log = atLeastOnceLog({ seed, runId: `${h.id}-${run}`, copyRate: 0.4, pauses: true });
      copies += log.filter((r) => r.copy).length;
      await h.produce(log.map((r) => r.event));
      if (run % 2 === 1) {
        // Redelivery: a new consumer group reads the topics from the start; stored positions are skipped.
        await projector.stop();
        group = `-${run}`;
        projector = await startLive(group);
      }
      await h.waitForCatchUp(60_000, `projector-ch-${h.id}${group}`);
      const report = await replayCh({ clickhouseUrl: h.clickhouseUrl, database: h.ch.database, databaseUrl: h.pg.url, kafka: h.kafka, logger: h.logger, topics: h.topics, batchSize: 50, swapThreshold: 10, progress: null });
      expect(report.verified, `run ${run} (seed ${seed})`).toBe('live');
    }
    // The swapped-in facts are those the pure model names for the whole log.
    const inLog = await h.events();
    const topicName: Readonly<Record<string, string>> = { [h.topics.jobs]: 'jobs', [h.topics.pages]: 'pages', [h.topics.items]: 'items' };
    const expected = expectedFacts(inLog.map((e) => ({ topic: topicName[e.topic]!, partition: e.partition, offset: BigInt(e.offset), event_id: (e.event.value as { event_id: string }).event_id })), DEDUPE_WINDOW);
    expect(await storedFacts(h.ch)).toEqual(expected);
    const jobEvents = inLog.filter((e) => e.topic === h.topics.jobs).map((e) => ({ partition: e.partition, offset: BigInt(e.offset), event: e.event }));
    expect(await jobRunTimes(h.ch, undefined, NOW_DATE)).toEqual(expectedRunTimes(jobEvents, NOW));
    expect(jobEvents.some((e) => e.event.name === 'JobPaused')).toBe(true);
    expect(copies).toBeGreaterThan(0);
    expect(expected.size).toBeLessThan(inLog.length);
  });
});
