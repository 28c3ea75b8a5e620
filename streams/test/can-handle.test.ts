/**
 * Readers that declare the events they handle (a projection's canHandle, a live feed's names) are
 * given those events only, and never read the bodies of the others: the schema id names the event.
 * Shown with a body Avro cannot read under an unhandled event's schema id: a reader that handles
 * the event finds it undecodable, one that does not handle it passes over it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { samples } from '@trawl/schemas';
import { endOffsets, endpoints, MetricsRegistry, readProjectionOffsets, readTopics, resetProjectionOffsets, runProjection, TRAWL_HEADERS, UndecodableMessageError } from '@trawl/streams';
import { testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;
let db: pg.Pool;
let table: string;
let name: string;

beforeAll(async () => {
  h = await harness('can-handle', [{ name: 'pages', partitions: 2 }, { name: 'dlq' }], { postgres: true });
  db = new pg.Pool({ connectionString: endpoints().databaseUrl, max: 4 });
  table = `t_${testId('handles').replace(/[^a-z0-9]/g, '_')}`;
  name = `handles-${table}`;
  await db.query(`CREATE TABLE ${table} (name text, event_id text, "offset" bigint)`);
});

afterAll(async () => {
  await resetProjectionOffsets(db, name).catch(() => {});
  await db?.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
  await db?.end();
  await h?.close();
});

/** A PageFailed's frame (magic byte, its schema id) with a body Avro cannot read. */
async function unreadableFailure(topic: string): Promise<Buffer> {
  const valid = await h.codec.encode(topic, 'PageFailed', samples.PageFailed);
  return Buffer.concat([valid.subarray(0, 5), randomBytes(4096)]);
}

describe('declaring the events a reader handles', () => {
  it('the codec reads a body only for an event it is asked for', async () => {
    const topic = h.topics.names.pages!;
    const fetched = await h.codec.encode(topic, 'PageFetched', samples.PageFetched);
    const garbage = await unreadableFailure(topic);
    const pages = new Set(['PageFetched'] as const);
    expect((await h.codec.decodeIf(fetched, pages))?.value.event_id).toBe(samples.PageFetched.event_id);
    expect(await h.codec.decodeIf(garbage, pages)).toBeUndefined();
    await expect(h.codec.decodeIf(garbage, new Set(['PageFailed'] as const))).rejects.toThrow(UndecodableMessageError);
    // No frame at all is undecodable whatever is asked for.
    await expect(h.codec.decodeIf(Buffer.from('not avro at all'), pages)).rejects.toThrow(UndecodableMessageError);
  });

  it('a projection applies only what it handles, moves past the rest, and dead-letters none of the rest unread', async () => {
    const topic = h.topics.names.pages!;
    const dlq = h.topics.names.dlq!;
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      const key = `job-${i % 4}`;
      sends.push(emitSample(h.producer, 'PageFetched', { event_id: `fetched-${i}`, job_id: key }, { topic, key }, samples.PageFetched));
      sends.push(emitSample(h.producer, 'PageFailed', { event_id: `failed-${i}`, job_id: key }, { topic, key }, samples.PageFailed));
    }
    await Promise.all(sends);
    await h.producer.sendRaw({ topic, key: 'job-0', value: await unreadableFailure(topic) });
    await h.producer.sendRaw({ topic, key: 'job-1', value: Buffer.from('not avro at all') });
    const projection = await runProjection({
      name,
      groupId: testId('g-handles'),
      topics: [topic],
      canHandle: ['PageFetched'],
      deadLetterTopic: dlq,
      kafka: h.kafka,
      logger: h.logger,
      producer: h.producer,
      pool: db,
      metrics: new MetricsRegistry(),
      maxWaitTimeMs: 200,
      apply: async (events, tx) => {
        for (const e of events) await tx.query(`INSERT INTO ${table} VALUES ($1, $2, $3)`, [e.name, e.value.event_id, e.offset]);
      },
    });
    const end = [...(await endOffsets(h.kafka, [topic])).values()].reduce((a, b) => a + b, 0n);
    try {
      await waitFor(async () => (await readProjectionOffsets(db, name)).reduce((a, o) => a + o.nextOffset, 0n) === end, { message: 'the stored offsets at the end of the log' });
    } finally {
      await projection.stop();
    }
    const { rows } = await db.query<{ name: string; n: string }>(`SELECT name, count(*) AS n FROM ${table} GROUP BY name`);
    expect(rows).toEqual([{ name: 'PageFetched', n: '40' }]);
    expect(projection.stats().applied).toBe(40);
    // The message without a frame is dead-lettered; the PageFailed whose body is garbage was never read.
    const dead = (await readTopics(h.kafka, [dlq])).filter((m) => m.headers[TRAWL_HEADERS.originalTopic]?.toString() === topic);
    expect(dead.map((m) => m.value?.toString())).toEqual(['not avro at all']);
  });
});
