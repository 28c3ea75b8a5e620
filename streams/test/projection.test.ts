import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { samples } from '@trawl/schemas';
import {
  endOffsets,
  endpoints,
  MetricsRegistry,
  readEvents,
  readProjectionOffsets,
  readTopics,
  resetProjectionOffsets,
  runProjection,
  TRAWL_HEADERS,
  type Projection,
  type ProjectionOptions,
} from '@trawl/streams';
import { startTcpProxy, testId, waitFor, type TcpProxy } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';
import { countingModel, type CountingModel } from './projection-support.ts';

let h: Harness;
let db: pg.Pool;
let topic: string;
let model: CountingModel;
let name: string;
let produced = 0;

async function produce(count: number): Promise<void> {
  const sends: Promise<string>[] = [];
  for (let i = 0; i < count; i++, produced++) {
    sends.push(emitSample(h.producer, 'PageFailed', { event_id: `page-${produced}`, job_id: `job-${produced % 8}` }, { topic, key: `job-${produced % 8}` }, samples.PageFailed));
  }
  await Promise.all(sends);
}

function options(overrides: Partial<ProjectionOptions> = {}): ProjectionOptions {
  return {
    name,
    groupId: testId('g-proj'),
    topics: [topic],
    deadLetterTopic: h.topics.names.dlq!,
    kafka: h.kafka,
    logger: h.logger,
    producer: h.producer,
    pool: db,
    metrics: new MetricsRegistry(),
    setup: (pool) => model.setup(pool),
    apply: model.apply(),
    maxWaitTimeMs: 200,
    backoff: { initialMs: 100, maxMs: 500 },
    ...overrides,
  };
}

async function storedTotal(): Promise<bigint> {
  return (await readProjectionOffsets(db, name)).reduce((s, o) => s + o.nextOffset, 0n);
}

async function logEnd(): Promise<bigint> {
  return [...(await endOffsets(h.kafka, [topic])).values()].reduce((s, o) => s + o, 0n);
}

beforeAll(async () => {
  h = await harness('projection', [{ name: 'pages', partitions: 2 }, { name: 'out' }, { name: 'dlq' }], { postgres: true });
  db = new pg.Pool({ connectionString: endpoints().databaseUrl, max: 6 });
  topic = h.topics.names.pages!;
  model = countingModel(testId('proj'));
  name = `proj-${model.table}`;
});

afterAll(async () => {
  await resetProjectionOffsets(db, name).catch(() => {});
  await model?.drop(db).catch(() => {});
  await db?.end();
  await h?.close();
});

describe('runProjection', () => {
  it('dead-letters undecodable events with their origin and moves past them', async () => {
    await produce(50);
    await h.producer.sendRaw({ topic, key: 'job-0', value: Buffer.from('not avro at all') });
    await produce(50);
    const projection = await runProjection(options());
    try {
      await waitFor(async () => (await storedTotal()) === (await logEnd()), { message: 'the stored offsets to reach the end of the log' });
    } finally {
      await projection.stop();
    }
    expect(await model.counts(db)).toEqual({ rows: 100, distinct: 100, total: 100 });
    const dead = (await readTopics(h.kafka, [h.topics.names.dlq!])).filter((m) => m.headers[TRAWL_HEADERS.originalTopic]?.toString() === topic);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.value!.toString()).toBe('not avro at all');
    expect(dead[0]!.headers[TRAWL_HEADERS.deadLetterReason]?.toString()).toBe('undecodable');
    expect(dead[0]!.headers[TRAWL_HEADERS.originalOffset]).toBeDefined();
  });

  it('skips what was already applied when a new group delivers everything again', async () => {
    // A new group id starts at offset 0 in Kafka; Postgres says where the projection really is.
    const projection = await runProjection(options({ groupId: testId('g-proj-again') }));
    try {
      await projection.ready;
      await produce(10);
      await waitFor(async () => (await storedTotal()) === (await logEnd()), { message: 'the new events' });
    } finally {
      await projection.stop();
    }
    expect(await model.counts(db)).toEqual({ rows: 110, distinct: 110, total: 110 });
    expect(projection.stats().applied).toBe(10);
  });

  it('waits out Postgres going away and resumes without loss or double counting', async () => {
    const url = new URL(endpoints().databaseUrl);
    const proxy: TcpProxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const viaProxy = new pg.Pool({ connectionString: url.toString(), max: 4, connectionTimeoutMillis: 1_000 });
    viaProxy.on('error', () => {});
    let projection: Projection | undefined;
    try {
      projection = await runProjection(options({ pool: viaProxy, apply: model.apply({ delayMs: 20 }), maxBytesPerPartition: 4096 }));
      await projection.ready;
      await proxy.cut();
      await produce(200);
      await waitFor(() => projection!.stats().failures >= 2, { message: 'failed attempts while Postgres is away' });
      expect((await model.counts(db)).total).toBe(110);
      await proxy.restore();
      await waitFor(async () => (await storedTotal()) === (await logEnd()), { timeoutMs: 30_000, message: 'catching up after Postgres returns' });
    } finally {
      await projection?.stop();
      await viaProxy.end().catch(() => {});
      await proxy.close();
    }
    expect(await model.counts(db)).toEqual({ rows: 310, distinct: 310, total: 310 });
  });

  it('lets apply produce first and commit state and offsets after (the frontier pattern)', async () => {
    const out = h.topics.names.out!;
    const projection = await runProjection(
      options({
        apply: async (events, tx) => {
          // Produce first: the transaction commits only once Kafka acknowledged the sends.
          await Promise.all(
            events.map((e) =>
              emitSample(h.producer, 'JobCompleted', { event_id: `done-${e.value.event_id}`, job_id: e.value.job_id ?? 'none' }, { topic: out, key: e.key ?? 'none' }, samples.JobCompleted),
            ),
          );
          await model.apply()(events, tx);
        },
      }),
    );
    try {
      await projection.ready;
      await produce(30);
      await waitFor(async () => (await storedTotal()) === (await logEnd()), { message: 'the frontier-style batch' });
    } finally {
      await projection.stop();
    }
    const emitted = await readEvents(h.kafka, h.codec, [out]);
    expect(new Set(emitted.map((e) => e.event.value.event_id)).size).toBe(30);
    expect(await model.counts(db)).toEqual({ rows: 340, distinct: 340, total: 340 });
  });

  it('keeps its partitions through a transaction longer than the session timeout (heartbeats go on)', async () => {
    let slow = true;
    const projection = await runProjection(
      options({
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 1_000,
        apply: async (events, tx) => {
          if (slow) {
            slow = false;
            await new Promise((r) => setTimeout(r, 9_000));
          }
          await model.apply()(events, tx);
        },
      }),
    );
    try {
      await projection.ready;
      await produce(5);
      await waitFor(async () => (await storedTotal()) === (await logEnd()), { timeoutMs: 30_000, message: 'the slow batch' });
      expect(projection.stats().assignments).toBe(1);
      expect(projection.stats().applied).toBe(5);
    } finally {
      await projection.stop();
    }
    expect(await model.counts(db)).toEqual({ rows: 345, distinct: 345, total: 345 });
  });

  it('replays from the start after its offsets are reset with its read model', async () => {
    await db.query(`TRUNCATE ${model.table}_events`);
    await db.query(`UPDATE ${model.table}_total SET n = 0`);
    await resetProjectionOffsets(db, name);
    const projection = await runProjection(options());
    try {
      await waitFor(async () => (await storedTotal()) === (await logEnd()), { message: 'the replay' });
    } finally {
      await projection.stop();
    }
    expect(await model.counts(db)).toEqual({ rows: 345, distinct: 345, total: 345 });
  });

  it('with combinePartitions, applies the batches of several partitions in one transaction, each event once', async () => {
    const partitionsPerApply: number[] = [];
    const count = model.apply();
    let failed = false;
    const projection = await runProjection(
      options({
        combinePartitions: true,
        apply: async (events, tx) => {
          const partitions = new Set(events.map((e) => e.partition)).size;
          // The first combined transaction fails: each of its batches is retried (alone, then combined again).
          if (partitions > 1 && !failed) {
            failed = true;
            throw new Error('injected: a combined transaction fails');
          }
          partitionsPerApply.push(partitions);
          await count(events, tx);
        },
      }),
    );
    let added = 0;
    try {
      await projection.ready;
      // A fetch hands each partition's batch over separately; events produced together meet in one transaction.
      while (added < 400 && !partitionsPerApply.some((n) => n > 1)) {
        await produce(40);
        added += 40;
        await waitFor(async () => (await storedTotal()) === (await logEnd()), { message: 'the combined batches' });
      }
    } finally {
      await projection.stop();
    }
    expect(failed).toBe(true);
    expect(projection.stats().failures).toBeGreaterThanOrEqual(2);
    expect(partitionsPerApply.some((n) => n > 1)).toBe(true);
    const total = 345 + added;
    expect(await model.counts(db)).toEqual({ rows: total, distinct: total, total });
    expect(projection.stats().applied).toBe(added);
  });
});
