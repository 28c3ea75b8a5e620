import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { RetriableError, retryTiers, runEventConsumer, type ConsumedEvent, type EventConsumer, type PartitionStats } from '@trawl/streams';
import { committedOffsets, testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

/**
 * Tier delays. The first is long next to what must happen inside it (the flaky message's forward
 * acknowledged, then 20 trivial handlers on messages already fetched), so "the partition went on
 * meanwhile" holds with a wide margin; tiers 1 and 2 differ so a tier using the other's delay
 * fails the 'never early' checks.
 */
const DELAYS = [3000, 1000, 2000];
/**
 * How late a retry may run: a fetch cycle (maxWaitTimeMs 250) plus scheduling on a busy two-core
 * machine (CI runs other suites' brokers and processes beside this one). Early is never allowed.
 */
const LATE_TOLERANCE_MS = 10_000;

let h: Harness;

beforeAll(async () => {
  h = await harness('retry-tiers', [
    { name: 'fetch', partitions: 1 },
    { name: 'fetch.retry.1', partitions: 2 },
    { name: 'fetch.retry.2', partitions: 2 },
    { name: 'fetch.retry.3', partitions: 2 },
    { name: 'fetch.dlq' },
  ]);
});

afterAll(async () => {
  await h?.close();
});

describe('non-blocking retry tiers', () => {
  it('runs a message failing twice through two tiers, with attempt 3 last, without holding up its partition', async () => {
    const source = h.topics.names.fetch!;
    const tiers = retryTiers(source, DELAYS);
    const runs: { fetchId: string; attempt: number; topic: string; at: number; originOffset: string }[] = [];
    const groupId = testId('g-retry');
    // Everything is in the source partition before the consumer starts (fresh topic, new group,
    // read from the beginning): the flaky one at offset 0, then other hosts behind it.
    await emitSample(h.producer, 'FetchRequested', { fetch_id: 'flaky', url: 'https://flaky.example/' }, { topic: source, key: 'flaky.example' }, samples.FetchRequested);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        emitSample(h.producer, 'FetchRequested', { fetch_id: `ok-${i}`, url: `https://ok${i}.example/` }, { topic: source, key: `ok${i}.example` }, samples.FetchRequested),
      ),
    );
    // The source partition as the consumer sees it when the retry runs: nothing of it waiting.
    let sourceAtRetry: PartitionStats | undefined;
    const started: { consumer?: EventConsumer } = {}; // for the handler, once runEventConsumer returned
    const consumer = await runEventConsumer({
      name: 'retry-tiers',
      groupId,
      topics: [source],
      retryTiers: tiers,
      deadLetterTopic: h.topics.names['fetch.dlq']!,
      kafka: h.kafka,
      logger: h.logger,
      producer: h.producer,
      metrics: h.metrics,
      maxWaitTimeMs: 250,
      keyOrdering: true,
      // One handler at a time per partition: the others can only run once the flaky one has left
      // the source partition's slot, so a retry that waited in place (or paused the partition)
      // would make them run after its second attempt.
      concurrency: 1,
      handler: (event: ConsumedEvent) => {
        if (event.name !== 'FetchRequested') throw new Error(`unexpected ${event.name}`);
        runs.push({ fetchId: event.value.fetch_id, attempt: event.attempt, topic: event.topic, at: Date.now(), originOffset: event.origin.offset });
        if (event.value.fetch_id === 'flaky' && event.attempt === 2) sourceAtRetry = started.consumer?.stats().partitions.find((p) => p.topic === source && p.partition === 0);
        if (event.value.fetch_id === 'flaky' && event.attempt < 3) throw new RetriableError(`HTTP 503 on attempt ${event.attempt}`);
      },
    });
    started.consumer = consumer;
    try {
      await consumer.ready;
      await waitFor(() => runs.some((r) => r.fetchId === 'flaky' && r.attempt === 3), {
        timeoutMs: DELAYS[0]! + DELAYS[1]! + 2 * LATE_TOLERANCE_MS + 10_000,
        message: 'the third attempt',
      });
    } finally {
      await consumer.stop();
    }

    const flaky = runs.filter((r) => r.fetchId === 'flaky');
    expect(flaky.map((r) => [r.attempt, r.topic])).toEqual([
      [1, source],
      [2, tiers[0]!.topic],
      [3, tiers[1]!.topic],
    ]);
    expect(new Set(flaky.map((r) => r.originOffset))).toEqual(new Set(['0']));
    const [first, second, third] = flaky as [(typeof flaky)[0], (typeof flaky)[0], (typeof flaky)[0]];
    expect(second.at - first.at).toBeGreaterThanOrEqual(DELAYS[0]!);
    expect(second.at - first.at).toBeLessThan(DELAYS[0]! + LATE_TOLERANCE_MS);
    expect(third.at - second.at).toBeGreaterThanOrEqual(DELAYS[1]!);
    expect(third.at - second.at).toBeLessThan(DELAYS[1]! + LATE_TOLERANCE_MS);

    // Every other host on the partition was done before the flaky one's retry ran: the wait for it
    // held up nothing behind it. (Order of the runs, not clock readings.)
    const others = runs.filter((r) => r.fetchId !== 'flaky');
    expect(others).toHaveLength(20);
    expect(runs.indexOf(first)).toBe(0);
    expect(runs.slice(0, runs.indexOf(second)).filter((r) => r.fetchId !== 'flaky')).toHaveLength(20);
    // ...and the source partition was neither paused nor holding anything unfinished for it.
    expect(sourceAtRetry).toMatchObject({ paused: false, lowestUnfinished: '21', pending: 0 });

    const stats = consumer.stats();
    expect(stats.processed).toBe(21);
    expect(stats.retried).toBe(2);
    expect(stats.deadLettered).toBe(0);
    // The source partition is committed to its end: nothing waits on it.
    expect((await committedOffsets(h.kafka, groupId, source)).get(0)).toBe(21n);
  });
});
