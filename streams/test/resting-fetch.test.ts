/**
 * A consumer that rests (consumer/resting-fetch.ts) on the real broker: while nothing comes its
 * fetches grow far apart, and a record written then still reaches its handler at once — even for
 * a consumer whose busy fetch waits for 64 KiB.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Consumer, ConsumerConfig, Kafka } from 'kafkajs';
import { samples } from '@trawl/schemas';
import { runEventConsumer } from '@trawl/streams';
import { testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;
let topic: string;

beforeAll(async () => {
  h = await harness('resting-fetch', [{ name: 'events', partitions: 2 }]);
  topic = h.topics.names.events!;
});

afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('rests while idle, and a record written then is handled at once', async () => {
  let fetches = 0;
  // The client as given, whose consumers count their fetch requests (kafkajs's FETCH event).
  const counting = Object.create(h.kafka, {
    consumer: {
      value: (config: ConsumerConfig): Consumer => {
        const c = h.kafka.consumer(config);
        c.on(c.events.FETCH, () => void fetches++);
        return c;
      },
    },
  }) as Kafka;
  const handled: number[] = [];
  const previous = process.env.TRAWL_FETCH_REST_AFTER_MS;
  process.env.TRAWL_FETCH_REST_AFTER_MS = '300';
  const consumer = await runEventConsumer({
    name: 'resting', groupId: testId('g-resting'), topics: [topic], kafka: counting, logger: h.logger, producer: h.producer, metrics: h.metrics,
    // A projection's busy pace: a fetch waits 100 ms for 64 KiB.
    maxWaitTimeMs: 100,
    fetchMinBytes: 64 * 1024,
    handler: () => void handled.push(Date.now()),
  }).finally(() => {
    if (previous === undefined) delete process.env.TRAWL_FETCH_REST_AFTER_MS;
    else process.env.TRAWL_FETCH_REST_AFTER_MS = previous;
  });
  try {
    await consumer.ready;
    await sleep(1_000);
    const before = fetches;
    await sleep(9_000);
    // At the busy pace: ~90 fetches in 9 s. Resting, the waits grow to a quarter of the quiet (2.5 s).
    expect(fetches - before).toBeLessThan(25);
    await emitSample(h.producer, 'JobCompleted', { job_id: 'rested' }, { topic, key: 'rested' }, samples.JobCompleted);
    const sent = Date.now(); // written (acks=all): from here on the fetch's wait is what counts
    await waitFor(() => handled.length === 1, { message: () => `the record handled (got ${handled.length})` });
    // A rest of ~2.5 s that waited for the 64 KiB (or for its end) would show here; a loaded
    // machine's scheduling, well under it, does not.
    expect(handled[0]! - sent).toBeLessThan(1_500);
  } finally {
    await consumer.stop();
  }
}, 60_000);
