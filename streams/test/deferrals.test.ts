import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { DeferredError, retryTiers, runEventConsumer, TRAWL_HEADERS, type ConsumedEvent } from '@trawl/streams';
import { testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

/**
 * A handler that says "not yet" (DeferredError) more often than TRAWL_MAX_DELIVERIES: each deferral
 * parks the message in a retry tier until its due time as the same attempt, so it is neither
 * retried as a failure, nor exhausted, nor poison — and the partition goes on meanwhile.
 */
const DELAYS = [400, 800, 1600];
const DEFERRALS = 5;

let h: Harness;

beforeAll(async () => {
  h = await harness('deferrals', [
    { name: 'fetch', partitions: 1 },
    { name: 'fetch.retry.1', partitions: 1 },
    { name: 'fetch.retry.2', partitions: 1 },
    { name: 'fetch.retry.3', partitions: 1 },
    { name: 'fetch.dlq' },
  ]);
});

afterAll(async () => {
  await h?.close();
});

describe('deferrals', () => {
  it('parks a message deferred more often than the delivery limit, same attempt each time, never dead-lettered, never holding up its partition', async () => {
    const source = h.topics.names.fetch!;
    const tiers = retryTiers(source, DELAYS);
    await emitSample(h.producer, 'FetchRequested', { fetch_id: 'busy', url: 'https://busy.example/' }, { topic: source, key: 'shared' }, samples.FetchRequested);
    await emitSample(h.producer, 'FetchRequested', { fetch_id: 'other', url: 'https://other.example/' }, { topic: source, key: 'shared' }, samples.FetchRequested);
    const runs: { fetchId: string; attempt: number; topic: string; at: number; deferrals: string | undefined }[] = [];
    let dueAt = 0;
    const consumer = await runEventConsumer({
      name: 'deferrals',
      groupId: testId('g-defer'),
      topics: [source],
      retryTiers: tiers,
      deadLetterTopic: h.topics.names['fetch.dlq']!,
      kafka: h.kafka,
      logger: h.logger,
      producer: h.producer,
      metrics: h.metrics,
      maxWaitTimeMs: 250,
      maxDeliveries: 3,
      // One at a time: the other message can only run once the deferred one has left its slot.
      concurrency: 1,
      handler: (event: ConsumedEvent) => {
        if (event.name !== 'FetchRequested') throw new Error(`unexpected ${event.name}`);
        runs.push({ fetchId: event.value.fetch_id, attempt: event.attempt, topic: event.topic, at: Date.now(), deferrals: event.headers[TRAWL_HEADERS.deferrals] });
        const deferred = runs.filter((r) => r.fetchId === 'busy').length - 1;
        if (event.value.fetch_id === 'busy' && deferred < DEFERRALS) {
          dueAt = Date.now() + 300;
          throw new DeferredError('the host asks to wait', dueAt);
        }
      },
    });
    try {
      await consumer.ready;
      await waitFor(() => runs.filter((r) => r.fetchId === 'busy').length === DEFERRALS + 1, { timeoutMs: 60_000, message: 'the deferred message to run at last' });
    } finally {
      await consumer.stop();
    }
    const busy = runs.filter((r) => r.fetchId === 'busy');
    expect(busy.map((r) => r.attempt)).toEqual(Array(DEFERRALS + 1).fill(1));
    expect(busy.slice(1).map((r) => r.topic)).toEqual(Array(DEFERRALS).fill(tiers[0]!.topic)); // 300 ms: the shortest tier covers it
    expect(busy.map((r) => r.deferrals)).toEqual([undefined, '1', '2', '3', '4', '5']);
    for (let i = 1; i < busy.length; i++) expect(busy[i]!.at - busy[i - 1]!.at).toBeGreaterThanOrEqual(290);
    // The other message on the partition ran before the first deferral came back.
    expect(runs.findIndex((r) => r.fetchId === 'other')).toBe(1);
    const stats = consumer.stats();
    expect(stats).toMatchObject({ processed: 2, retried: 0, deadLettered: 0, poisoned: 0 });
  }, 90_000);
});
