import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { runEventConsumer } from '@trawl/streams';
import { committedOffsets, testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;
let topic: string;

beforeAll(async () => {
  h = await harness('quiet-commit', [{ name: 'events', partitions: 2 }]);
  topic = h.topics.names.events!;
});

afterAll(async () => {
  await h?.close();
});

describe('a consumer that has finished everything it was given', () => {
  it('commits soon after, not at its next commit tick', async () => {
    const groupId = testId('g-quiet');
    let handled = 0;
    const consumer = await runEventConsumer({
      name: 'quiet-commit', groupId, topics: [topic], kafka: h.kafka, logger: h.logger, producer: h.producer, metrics: h.metrics,
      // A tick far away: only the quiet commit can move the group's offsets within the test.
      commitIntervalMs: 600_000,
      handler: () => {
        handled++;
      },
    });
    try {
      for (let i = 0; i < 20; i++) await emitSample(h.producer, 'JobCompleted', { job_id: `job-${i}` }, { topic, key: `job-${i}` }, samples.JobCompleted);
      await waitFor(() => handled === 20, { message: () => `20 events handled (got ${handled})` });
      const total = async () => [...(await committedOffsets(h.kafka, groupId, topic)).values()].reduce((s, o) => s + (o > 0n ? o : 0n), 0n);
      await waitFor(async () => (await total()) === 20n, { timeoutMs: 10_000, message: 'the group to commit all 20 without a tick' });
      expect(await total()).toBe(20n);
    } finally {
      await consumer.stop();
    }
  });
});
