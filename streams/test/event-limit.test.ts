/**
 * The producer's event limit (TRAWL_MAX_EVENT_BYTES): an event over it is refused before anything is
 * sent, with a non-retriable error that names it and its size, and the events queued with it still
 * go out. Real Kafka and registry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { DEFAULT_MAX_EVENT_BYTES, EventProducer, EventTooLargeError, isRetriable, maxEventBytesFromEnv, readEvents } from '@trawl/streams';
import { harness, type Harness } from './support.ts';

let h: Harness;
let small: EventProducer;

beforeAll(async () => {
  h = await harness('event-limit', [{ name: 'items' }, { name: 'encoded' }, { name: 'broker' }]);
  small = new EventProducer({ kafka: h.kafka, logger: h.logger, codec: h.codec, maxEventBytes: 4_096 });
  await small.connect();
});
afterAll(async () => {
  await small?.disconnect();
  await h?.close();
});

const { event_id: _id, occurred_at: _at, causation_id: _c, ...itemBody } = samples.ItemExtracted;

describe('the event limit', () => {
  it('refuses an event over the limit, naming it and its size; what is queued with it goes out', async () => {
    const topic = h.topics.names.items!;
    const results = await Promise.allSettled([
      small.emit('ItemExtracted', { ...itemBody, fields: { title: 'before' } }, { eventId: '00000000-0000-4000-8000-000000000001', topic }),
      small.emit('ItemExtracted', { ...itemBody, fields: { title: '字'.repeat(2_000) } }, { eventId: '00000000-0000-4000-8000-000000000002', topic }),
      small.emit('ItemExtracted', { ...itemBody, fields: { title: 'after' } }, { eventId: '00000000-0000-4000-8000-000000000003', topic }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const err = (results[1] as PromiseRejectedResult).reason as EventTooLargeError;
    expect(err).toBeInstanceOf(EventTooLargeError);
    expect(err.code).toBe('TRAWL_EVENT_TOO_LARGE');
    expect(isRetriable(err)).toBe(false);
    expect(err.message).toMatch(/^ItemExtracted 00000000-0000-4000-8000-000000000002 is 6\d\d\d bytes on .*items, over the 4096-byte event limit/);
    expect(err.details).toMatchObject({ event: 'ItemExtracted', limit: 4_096 });
    const written = await readEvents(h.kafka, h.codec, [topic]);
    expect(written.map((e) => (e.event.value as unknown as { fields: { title: string } }).fields.title)).toEqual(['before', 'after']);
  });

  it('encode() measures without sending, so a unit of several events is refused before any is written', async () => {
    const topic = h.topics.names.encoded!;
    const ok = await small.encode('ItemExtracted', { ...itemBody, fields: { title: 'fits' } }, { eventId: '00000000-0000-4000-8000-000000000004', topic });
    expect(ok.bytes).toBeLessThan(4_096);
    expect(ok).toMatchObject({ name: 'ItemExtracted', eventId: '00000000-0000-4000-8000-000000000004', topic });
    await expect(small.encode('ItemExtracted', { ...itemBody, fields: { title: 'x'.repeat(5_000) } }, { topic })).rejects.toThrow(EventTooLargeError);
    expect(await readEvents(h.kafka, h.codec, [topic])).toEqual([]);
    await small.sendRaw(ok);
    expect((await readEvents(h.kafka, h.codec, [topic])).map((e) => e.event.value.event_id)).toEqual(['00000000-0000-4000-8000-000000000004']);
  });

  it('by default, refuses what the broker would (1 MB message.max.bytes) before sending it', async () => {
    expect(h.producer.maxEventBytes).toBe(DEFAULT_MAX_EVENT_BYTES);
    const topic = h.topics.names.broker!;
    const fields = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, '字'.repeat(16 * 1024)]));
    await expect(h.producer.emit('ItemExtracted', { ...itemBody, fields }, { topic })).rejects.toMatchObject({ code: 'TRAWL_EVENT_TOO_LARGE' });
  });

  it('reads its limit from TRAWL_MAX_EVENT_BYTES', () => {
    expect(maxEventBytesFromEnv({})).toBe(1_000_000);
    expect(maxEventBytesFromEnv({ TRAWL_MAX_EVENT_BYTES: '500000' })).toBe(500_000);
    expect(() => maxEventBytesFromEnv({ TRAWL_MAX_EVENT_BYTES: '1MB' })).toThrow(/TRAWL_MAX_EVENT_BYTES must be/);
  });
});
