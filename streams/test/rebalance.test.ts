import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { samples } from '@trawl/schemas';
import { CoPartitionedAssigner, endpoints, MetricsRegistry, resetProjectionOffsets, runEventConsumer, runProjection, type ApplyEvents, type EventConsumer, type Projection } from '@trawl/streams';
import { testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';
import { countingModel } from './projection-support.ts';

const PARTITIONS = 4;
const MESSAGES = 2000;
const MAX_UNCOMMITTED = 100;

let h: Harness;
let db: pg.Pool;

beforeAll(async () => {
  // jobs/pages: 3 partitions for 2 members, where kafkajs's round robin would split partition N.
  h = await harness(
    'rebalance',
    [{ name: 'events', partitions: PARTITIONS }, { name: 'slow' }, { name: 'jobs', partitions: 3 }, { name: 'pages', partitions: 3 }, { name: 'dlq' }],
    { postgres: true },
  );
  db = new pg.Pool({ connectionString: endpoints().databaseUrl, max: 4 });
  const topic = h.topics.names.events!;
  // In chunks, so the log holds many small record batches and fetches return small batches.
  for (let chunk = 0; chunk < MESSAGES; chunk += 40) {
    const sends: Promise<string>[] = [];
    for (let i = chunk; i < chunk + 40; i++) {
      sends.push(emitSample(h.producer, 'ItemExtracted', { event_id: `item-${i}`, job_id: `job-${i % 40}`, item_key: `k${i}` }, { topic, key: `job-${i % 40}` }, samples.ItemExtracted));
    }
    await Promise.all(sends);
  }
});

afterAll(async () => {
  await db?.end();
  await h?.close();
});

describe('two group members rebalancing while work is in flight', () => {
  it('lose nothing, and duplicate only within the window of each partition moved', async () => {
    const topic = h.topics.names.events!;
    const groupId = testId('g-rebalance');
    const seen = new Map<string, number>();
    let running = 0;
    let maxRunning = 0;
    // The first member alone stops after its head start and waits until the second has its
    // partitions: it cannot finish everything before the rebalance, however fast or slow the
    // machine. Its handlers wait in flight; its fetch loop (and so its rejoin) is not held up.
    const HEAD_START = MESSAGES * 0.15;
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    let gateOpen = false;
    const member = (name: string) =>
      runEventConsumer({
        name,
        groupId,
        topics: [topic],
        deadLetterTopic: h.topics.names.dlq!,
        kafka: h.kafka,
        logger: h.logger,
        producer: h.producer,
        metrics: h.metrics,
        concurrency: 2,
        maxUncommittedPerPartition: MAX_UNCOMMITTED,
        sessionTimeoutMs: 10_000,
        heartbeatIntervalMs: 500,
        commitIntervalMs: 200,
        maxWaitTimeMs: 200,
        handler: async (event) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          if (!gateOpen && seen.size >= HEAD_START) await gate;
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
          const id = `${event.partition}:${event.offset}`;
          seen.set(id, (seen.get(id) ?? 0) + 1);
          running -= 1;
        },
      });
    let a: EventConsumer | undefined;
    let b: EventConsumer | undefined;
    try {
      a = await member('rebalance-a');
      await waitFor(() => seen.size >= HEAD_START, { message: 'the first member under way' });
      b = await member('rebalance-b');
      await b.ready;
      expect(seen.size).toBeLessThan(MESSAGES * 0.5); // the gate held: most of the work is still to do
      gateOpen = true;
      openGate();
      // Stop the first member while it has work in flight (polled, not sampled once).
      await waitFor(() => seen.size >= MESSAGES * 0.5 && a!.stats().inFlight > 0, {
        message: () => `both members under way, the first with work in flight (have ${seen.size}, in flight ${a!.stats().inFlight})`,
      });
      await a.stop();
      await waitFor(() => seen.size === MESSAGES, { timeoutMs: 60_000, message: () => `every message (have ${seen.size})` });
    } finally {
      gateOpen = true;
      openGate();
      await a?.stop();
      await b?.stop();
    }
    const deliveries = [...seen.values()].reduce((s, n) => s + n, 0);
    const duplicates = deliveries - MESSAGES;
    if (process.env.TRAWL_TEST_REPORT) console.info('rebalance', { duplicates, maxRunning, a: a?.stats().processed, b: b?.stats().processed });
    expect(a!.stats().processed).toBeGreaterThan(0);
    expect(a!.stats().assignments).toBeGreaterThanOrEqual(2); // B's arrival moved partitions mid-stream
    expect(b!.stats().processed).toBeGreaterThan(0);
    // Two rebalances, each moving at most every partition: the bound is the window per partition moved.
    expect(duplicates).toBeLessThanOrEqual(MAX_UNCOMMITTED * PARTITIONS * 2);
    expect(maxRunning).toBeLessThanOrEqual(2 * PARTITIONS * 2);
  });

  it('keeps partition N of co-partitioned topics on one member with the CoPartitionedAssigner', async () => {
    const jobs = h.topics.names.jobs!;
    const pages = h.topics.names.pages!;
    const groupId = testId('g-copart');
    const owner = new Map<string, Set<string>>(); // "partition" -> members that handled it (either topic)
    const member = (name: string) =>
      runEventConsumer({
        name,
        groupId,
        topics: [jobs, pages],
        partitionAssigners: [CoPartitionedAssigner],
        deadLetterTopic: h.topics.names.dlq!,
        kafka: h.kafka,
        logger: h.logger,
        producer: h.producer,
        metrics: new MetricsRegistry(),
        heartbeatIntervalMs: 500,
        maxWaitTimeMs: 200,
        // The topics are this file's own and empty until the loop below: reading from the
        // beginning takes all 128, with no wait for "latest" to be resolved first.
        fromBeginning: true,
        handler: (event) => {
          const set = owner.get(String(event.partition)) ?? new Set<string>();
          set.add(name);
          owner.set(String(event.partition), set);
        },
      });
    const a = await member('copart-a');
    const b = await member('copart-b');
    try {
      await waitFor(() => a.stats().assignments >= 2 && b.stats().assignments >= 1, { message: 'both members assigned' });
      for (let i = 0; i < 64; i++) {
        await emitSample(h.producer, 'JobDispatched', { job_id: `job-${i}` }, { topic: jobs, key: `job-${i}` }, samples.JobDispatched);
        await emitSample(h.producer, 'PageFetched', { job_id: `job-${i}` }, { topic: pages, key: `job-${i}` }, samples.PageFetched);
      }
      await waitFor(() => a.stats().processed + b.stats().processed === 128, { message: () => `128 events (have ${a.stats().processed + b.stats().processed})` });
    } finally {
      await a.stop();
      await b.stop();
    }
    expect(owner.size).toBe(3);
    for (const [partition, members] of owner) expect(members.size, `partition ${partition}`).toBe(1);
    expect(a.stats().processed).toBeGreaterThan(0);
    expect(b.stats().processed).toBeGreaterThan(0);
  });

  it('a handler running longer than the session timeout keeps its partition (heartbeats go on)', async () => {
    const topic = h.topics.names.slow!;
    await emitSample(h.producer, 'ItemExtracted', { event_id: 'slow' }, { topic, key: 'job' }, samples.ItemExtracted);
    let runs = 0;
    const consumer = await runEventConsumer({
      name: 'slow-handler',
      groupId: testId('g-slow'),
      topics: [topic],
      deadLetterTopic: h.topics.names.dlq!,
      kafka: h.kafka,
      logger: h.logger,
      producer: h.producer,
      metrics: h.metrics,
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 1_000,
      handler: async () => {
        runs += 1;
        await new Promise((r) => setTimeout(r, 9_000));
      },
    });
    try {
      await waitFor(() => consumer.stats().processed === 1, { timeoutMs: 20_000, message: 'the slow message' });
      expect(runs).toBe(1);
      expect(consumer.stats().assignments).toBe(1);
    } finally {
      await consumer.stop();
    }
  });

  it.each([false, true])('a projection built with the helper counts every event exactly once (combinePartitions %s)', async (combinePartitions) => {
    const topic = h.topics.names.events!;
    const model = countingModel(testId('rebalance'));
    const name = `proj-${model.table}`;
    const groupId = testId('g-projection');
    // The first instance alone stops after its head start, inside a transaction, until the second
    // has asked to join (the group is rebalancing); from then until it has rejoined, its
    // transactions are slow. So it cannot finish everything before the second gets partitions,
    // however fast or slow the machine. (It cannot wait for the second's assignment itself:
    // kafkajs rejoins only between batches, so that would hold up the rebalance it waits for.)
    const HEAD_START = MESSAGES * 0.1;
    let p1: Projection | undefined;
    let p2: Projection | undefined;
    const admin = h.kafka.admin();
    await admin.connect();
    const rebalancing = async () => {
      const { groups } = await admin.describeGroups([groupId]);
      return groups[0]?.state === 'PreparingRebalance' || groups[0]?.state === 'CompletingRebalance';
    };
    let firstApplied = 0;
    let secondJoining = false;
    const applyNormally = model.apply({ delayMs: 30 });
    const applySlowly = model.apply({ delayMs: 200 });
    const firstApply: ApplyEvents = async (events, tx) => {
      if (!secondJoining && firstApplied >= HEAD_START) {
        // (Or already rejoined: kafkajs may rejoin while a second batch of this one still waits here.)
        await waitFor(async () => (p1?.stats().assignments ?? 0) >= 2 || (await rebalancing()), { timeoutMs: 60_000, message: 'the second instance joining' });
        secondJoining = true;
      }
      const rejoined = (p1?.stats().assignments ?? 0) >= 2;
      await (secondJoining && !rejoined ? applySlowly : applyNormally)(events, tx);
      firstApplied += events.length;
    };
    const instance = (apply: ApplyEvents) =>
      runProjection({
        name,
        groupId,
        topics: [topic],
        deadLetterTopic: h.topics.names.dlq!,
        kafka: h.kafka,
        logger: h.logger,
        producer: h.producer,
        pool: db,
        // Each instance its own registry: in one process, two instances of one projection share labels.
        metrics: new MetricsRegistry(),
        setup: (pool) => model.setup(pool),
        // Slow transactions keep batches in flight while the group rebalances.
        apply,
        partitionsConsumedConcurrently: 2,
        combinePartitions,
        // Small batches: many transactions per partition, so the rebalance lands mid-stream.
        maxBytesPerPartition: 8 * 1024,
        sessionTimeoutMs: 10_000,
        heartbeatIntervalMs: 500,
        maxWaitTimeMs: 200,
      });
    try {
      p1 = await instance(firstApply);
      await waitFor(async () => (await model.counts(db)).total >= HEAD_START, { message: 'the first instance under way' });
      p2 = await instance(applyNormally);
      await p2.ready;
      const firstAtJoin = p1.stats().applied;
      await waitFor(async () => (await model.counts(db)).total >= MESSAGES * 0.4, { message: 'both instances under way' });
      await p1.stop();
      await waitFor(async () => (await model.counts(db)).rows >= MESSAGES, { timeoutMs: 60_000, message: 'every event projected' });
      // Give any straggler (a duplicate) a moment to show.
      await new Promise((r) => setTimeout(r, 500));
      expect(await model.counts(db)).toEqual({ rows: MESSAGES, distinct: MESSAGES, total: MESSAGES });
      const applied = [p1.stats().applied, p2.stats().applied];
      expect(applied[0]).toBeGreaterThan(0);
      expect(applied[1]).toBeGreaterThan(0);
      expect(applied[0]! + applied[1]!).toBe(MESSAGES);
      if (process.env.TRAWL_TEST_REPORT) console.info('projection', { applied, firstAtJoin, p1: p1.stats(), p2: p2.stats() });
    } finally {
      secondJoining = true;
      await p1?.stop();
      await p2?.stop();
      await admin.disconnect();
      await resetProjectionOffsets(db, name);
      await model.drop(db);
    }
  });
});
