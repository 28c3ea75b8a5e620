import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { subscribeLive, type LiveEvent } from '@trawl/streams';
import { waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;

beforeAll(async () => {
  h = await harness('live-feed', [{ name: 'pages', partitions: 2 }]);
});

afterAll(async () => {
  await h?.close();
});

describe('subscribeLive', () => {
  it('delivers events produced after it joined, filtered by name, and skips poison', async () => {
    const topic = h.topics.names.pages!;
    await emitSample(h.producer, 'PageFailed', { event_id: 'before' }, { topic, key: 'job' }, samples.PageFailed);
    const seen: LiveEvent[] = [];
    const live = await subscribeLive({ topics: [topic], names: ['PageFetched'], kafka: h.kafka, codec: h.codec, logger: h.logger, onEvent: (e) => void seen.push(e) });
    try {
      await live.ready;
      await h.producer.sendRaw({ topic, key: 'job', value: Buffer.from('poison') });
      await emitSample(h.producer, 'PageFailed', { event_id: 'filtered-out' }, { topic, key: 'job' }, samples.PageFailed);
      await emitSample(h.producer, 'PageFetched', { event_id: 'after' }, { topic, key: 'job' }, samples.PageFetched);
      await waitFor(() => seen.length > 0, { message: 'the live event' });
    } finally {
      await live.stop();
    }
    expect(seen.map((e) => e.value.event_id)).toEqual(['after']);
    expect(seen[0]!.name).toBe('PageFetched');
    expect(seen[0]!.key).toBe('job');
  });
});
