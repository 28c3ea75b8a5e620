/**
 * `startInOrder`: the handlers of one partition start in offset order although many run at once,
 * also when an earlier message takes longer to decode than later ones (here the first message's
 * decode is held up, as a schema fetched from the registry for it alone would hold it). The
 * projector-ch flush keeps the first copy of an event by its place in the batch; a copy handed
 * over before its original was stored twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { EventCodec, runEventConsumer, type DecodedEvent } from '@trawl/streams';
import { testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

/** The real codec, with the decode of one fetch id held up. */
class SlowFirstCodec extends EventCodec {
  override async decode(buffer: Buffer | null): Promise<DecodedEvent> {
    const event = await super.decode(buffer);
    if ((event.value as { fetch_id?: string }).fetch_id === 'm-0') await new Promise((r) => setTimeout(r, 300));
    return event;
  }
}

let h: Harness;

beforeAll(async () => {
  h = await harness('start-in-order', [{ name: 'events', partitions: 1 }, { name: 'dlq' }]);
  for (let i = 0; i < 20; i++) await emitSample(h.producer, 'FetchRequested', { fetch_id: `m-${i}` }, { topic: h.topics.names.events!, key: 'one' }, samples.FetchRequested);
});
afterAll(async () => {
  await h?.close();
});

async function handOrder(startInOrder: boolean): Promise<string[]> {
  const seen: string[] = [];
  const consumer = await runEventConsumer({
    name: 'start-in-order',
    groupId: testId('g-order'),
    topics: [h.topics.names.events!],
    deadLetterTopic: h.topics.names.dlq!,
    kafka: h.kafka,
    logger: h.logger,
    producer: h.producer,
    metrics: h.metrics,
    codec: new SlowFirstCodec(),
    concurrency: 64,
    startInOrder,
    handler: (event) => {
      seen.push((event.value as { fetch_id: string }).fetch_id);
    },
  });
  try {
    await waitFor(() => seen.length === 20, { message: () => `20 handled (got ${seen.length})` });
  } finally {
    await consumer.stop();
  }
  return seen;
}

describe('startInOrder', () => {
  it('starts the handlers of a partition in offset order, though the first message decodes last', async () => {
    const inOrder = Array.from({ length: 20 }, (_, i) => `m-${i}`);
    expect(await handOrder(true)).toEqual(inOrder);
    // Without it, the held-up first message reaches its handler after the others.
    const free = await handOrder(false);
    expect(free).not.toEqual(inOrder);
    expect(free.at(-1)).toBe('m-0');
  });
});
