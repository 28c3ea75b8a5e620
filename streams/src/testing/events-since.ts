import type { Kafka } from 'kafkajs';
import { EventCodec } from '../registry/event-codec.ts';
import { readRanges, type RangeEvent } from '../reader/range-reader.ts';
import { endOffsets } from '../reader/topic-reader.ts';

/** Every event of `topics` appended since `since` (end offsets taken before, e.g. with endOffsets). */
export async function eventsSince(kafka: Kafka, since: ReadonlyMap<string, bigint>, topics: readonly string[], codec: EventCodec = new EventCodec()): Promise<RangeEvent[]> {
  const now = await endOffsets(kafka, topics);
  const ranges = [...now].map(([key, to]) => {
    const at = key.lastIndexOf(':');
    return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)), from: since.get(key) ?? 0n, to };
  });
  const out: RangeEvent[] = [];
  await readRanges({ kafka, codec, ranges, onBatch: async (batch) => void out.push(...batch) });
  return out;
}
