/**
 * runRawProjection: messages reach `apply` as they were read — undecodable ones included, nothing
 * dead-lettered — with runProjection's exactly-once effect (offsets in the same transaction).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { samples } from '@trawl/schemas';
import { endOffsets, endpoints, MetricsRegistry, readProjectionOffsets, resetProjectionOffsets, runRawProjection } from '@trawl/streams';
import { testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;
let db: pg.Pool;
let table: string;
let name: string;

beforeAll(async () => {
  h = await harness('raw-projection', [{ name: 'dlq', partitions: 2 }, { name: 'events-dlq' }], { postgres: true });
  db = new pg.Pool({ connectionString: endpoints().databaseUrl, max: 4 });
  table = `t_${testId('raw').replace(/[^a-z0-9]/g, '_')}`;
  name = `raw-${table}`;
  await db.query(`CREATE TABLE ${table} (topic text, partition int, "offset" bigint, value bytea, header text, PRIMARY KEY (topic, partition, "offset"))`);
});

afterAll(async () => {
  await resetProjectionOffsets(db, name).catch(() => {});
  await db?.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
  await db?.end();
  await h?.close();
});

describe('runRawProjection', () => {
  it('hands over every message undecoded, garbage included, once each, and dead-letters nothing', async () => {
    const topic = h.topics.names.dlq!;
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      sends.push(emitSample(h.producer, 'PageFailed', { event_id: `e-${i}`, job_id: `job-${i % 3}` }, { topic, key: `job-${i % 3}` }, samples.PageFailed));
      sends.push(h.producer.sendRaw({ topic, key: `job-${i % 3}`, value: Buffer.from(`garbage ${i}`), headers: { 'x-mark': String(i) } }));
    }
    await Promise.all(sends);
    const dlqBefore = await endOffsets(h.kafka, [h.topics.names['events-dlq']!]);
    const run = (group: string) =>
      runRawProjection({
        name,
        groupId: testId(group),
        topics: [topic],
        kafka: h.kafka,
        logger: h.logger,
        pool: db,
        metrics: new MetricsRegistry(),
        maxWaitTimeMs: 200,
        apply: async (messages, tx) => {
          for (const m of messages) {
            await tx.query(`INSERT INTO ${table} VALUES ($1, $2, $3, $4, $5)`, [m.topic, m.partition, m.offset, m.value, m.headers['x-mark'] ?? null]);
          }
        },
      });
    const end = [...(await endOffsets(h.kafka, [topic])).values()].reduce((a, b) => a + b, 0n);
    const stored = async () => (await readProjectionOffsets(db, name)).reduce((a, o) => a + o.nextOffset, 0n);
    const first = await run('g-raw');
    try {
      await waitFor(async () => (await stored()) === end, { message: 'every message projected' });
    } finally {
      await first.stop();
    }
    // A second group delivers everything again: Postgres's offsets skip it all (a duplicate would break the primary key).
    const second = await run('g-raw-again');
    try {
      await second.ready;
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      await second.stop();
    }
    const { rows } = await db.query<{ n: number; garbage: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE position('garbage '::bytea IN value) = 1)::int AS garbage FROM ${table}`,
    );
    expect(rows[0]).toEqual({ n: 60, garbage: 30 });
    expect((await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE header IS NOT NULL`)).rows[0].n).toBe(30);
    expect(await endOffsets(h.kafka, [h.topics.names['events-dlq']!])).toEqual(dlqBefore);
  });
});
