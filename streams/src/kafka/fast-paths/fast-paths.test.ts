import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { kafkajsFastPaths, Partitioners } from '../kafkajs.ts';
import { keyedPartitioner } from '../keyed-partitioner.ts';
import { groupMessagesPerPartition } from './group-by-partition.ts';
import { installFastPaths } from './install-fast-paths.ts';
import { KAFKAJS_VERSION } from '../kafkajs-version.ts';
import type { KafkajsDecoder } from './kafkajs-internals.ts';
import type { ProduceRequestArgs } from './produce-request.ts';
import type { RecordBatchContext } from './record-decoder.ts';

const require = createRequire(import.meta.url);
type Encoded = { buffer: Buffer };
type Long = { fromValue(v: unknown): { toString(): string }; fromInt(v: number): unknown };
const Long = require('kafkajs/src/utils/long.js') as Long;
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => KafkajsDecoder;
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (r: object) => Encoded;
const { LOG_APPEND_TIME, CREATE_TIME } = require('kafkajs/src/protocol/timestampTypes.js') as Record<string, number>;

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random test inputs; `big` is the largest Buffer (deep equality of big Buffers is slow in vitest). */
function generator(seed: number, big = 17_000) {
  const next = random(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const text = () => pick(['', 'a', 'job-42', 'ünïcødé ✓', 'x'.repeat(int(300)), `k${int(1e6)}`]);
  const bytes = () => {
    const b = Buffer.allocUnsafe(pick([0, 1, 5, 127, 128, 300, big]));
    for (let i = 0; i < b.length; i += 97) b[i] = int(256);
    return b;
  };
  const keyOrValue = () => pick([null, undefined, text(), bytes()]);
  const headers = () => {
    const h: Record<string, unknown> = {};
    for (let i = int(4); i > 0; i--) h[pick(['trawl-event', 'trawl-attempt', 'ü', 'k'])] = pick([text(), bytes(), [text(), bytes()], []]);
    return h;
  };
  return { next, int, pick, text, bytes, keyOrValue, headers };
}

describe('kafkajs fast paths', () => {
  it('are in place for the kafkajs version they were written for', () => {
    expect(KAFKAJS_VERSION).toBe((require('kafkajs/package.json') as { version: string }).version);
    expect(kafkajsFastPaths).toMatchObject({ active: true });
    expect(installFastPaths(require).active).toBe(true); // a second install finds them in place
  });

  it('stay out when switched off', () => {
    expect(installFastPaths(require, { TRAWL_KAFKAJS_FAST_PATHS: '0' })).toEqual({ active: false, reason: 'off: TRAWL_KAFKAJS_FAST_PATHS=0' });
  });

  describe('produce request', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2026-11-24T03:00:00.123Z'));
    });
    afterEach(() => vi.useRealTimers());

    const originalFactory = () => kafkajsFastPaths.originals!.produceRequest;
    const fastFactory = () => require('kafkajs/src/protocol/requests/produce/v3/request.js') as typeof originalFactory extends () => infer F ? F : never;

    async function bothEncodings(args: ProduceRequestArgs): Promise<[Buffer, Buffer]> {
      const original = (await originalFactory()(args).encode()) as Encoded;
      const fast = (await fastFactory()(args).encode()) as Encoded;
      return [fast.buffer, original.buffer];
    }

    it('writes the bytes kafkajs writes, for any mix of keys, values and headers', async () => {
      for (let seed = 1; seed <= 300; seed++) {
        const g = generator(seed);
        const args: ProduceRequestArgs = {
          acks: g.pick([-1, 1]),
          timeout: 30_000,
          transactionalId: g.pick([undefined, null, 'tx-1']),
          producerId: g.pick([undefined, Long.fromValue(g.int(1e9)), '123456789012']),
          producerEpoch: g.int(5),
          topicData: Array.from({ length: 1 + g.int(3) }, (_, t) => ({
            topic: `trawl.topic-${t}`,
            partitions: Array.from({ length: 1 + g.int(4) }, (_, p) => ({
              partition: p,
              firstSequence: g.int(1e6),
              messages: Array.from({ length: 1 + g.int(g.pick([3, 200])) }, () => ({ key: g.keyOrValue(), value: g.keyOrValue(), headers: g.pick([undefined, g.headers()]) })),
            })),
          })),
        };
        const [fast, original] = await bothEncodings(args);
        expect(fast.equals(original), `seed ${seed}`).toBe(true);
      }
    });

    it('leaves compression, own timestamps and other value types to kafkajs', async () => {
      const base = { acks: -1, timeout: 1000, producerId: Long.fromValue(7), producerEpoch: 0 };
      const one = (message: object, compression?: number): ProduceRequestArgs => ({ ...base, compression, topicData: [{ topic: 't', partitions: [{ partition: 0, firstSequence: 0, messages: [message, { key: 'k', value: 'w' }] }] }] });
      for (const args of [one({ key: 'k', value: Buffer.from('v') }, 1), one({ key: 'k', value: 'v', timestamp: '1700000000000' })]) {
        const [fast, original] = await bothEncodings(args);
        expect(fast.equals(original)).toBe(true);
      }
      // What kafkajs refuses, it still refuses, in its own words.
      for (const args of [one({ key: 42, value: 'v' }), one({ key: 'k', value: 'v', headers: { h: null } })]) {
        const refusal = await originalFactory()(args).encode().catch((err: Error) => err.message);
        expect(refusal).toMatch(/argument/);
        await expect(fastFactory()(args).encode()).rejects.toThrow(refusal as string);
      }
    });
  });

  describe('record decoder', () => {
    const original = () => kafkajsFastPaths.originals!.recordDecoder;
    const fast = () => require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js') as ReturnType<typeof original>;

    /** A record's bytes as the batch decoder hands them on: its length prefix read off. */
    const recordBytes = (record: object): Buffer => new Decoder(encodeRecord(record).buffer).readVarIntBytes()!;

    it('decodes every record to what kafkajs decodes', () => {
      for (let seed = 1; seed <= 2000; seed++) {
        const g = generator(seed, 1000);
        const headers = g.headers();
        if (g.int(10) === 0) Object.defineProperty(headers, '__proto__', { value: g.text(), enumerable: true });
        if (g.int(10) === 0) Object.assign(headers, { toString: g.text() });
        const bytes = recordBytes({
          offsetDelta: g.int(g.pick([10, 100_000])),
          timestampDelta: g.pick([0, g.int(5000), -g.int(5000), 2 ** 50 + g.int(1000), -(2 ** 52)]),
          key: g.keyOrValue() ?? null,
          value: g.keyOrValue() ?? null,
          headers,
        });
        const context: RecordBatchContext = {
          firstOffset: g.pick(['0', String(g.int(1e9)), '9007199254740990', '9223372036854775000']),
          firstTimestamp: g.pick(['1764000000000', '-1', '9007199254740000']),
          maxTimestamp: '1764000009999',
          magicByte: 2,
          isControlBatch: g.pick([undefined, false, true]),
          timestampType: g.pick([CREATE_TIME, LOG_APPEND_TIME]),
        };
        const a = new Decoder(bytes);
        const b = new Decoder(bytes);
        expect(fast()(a, context), `seed ${seed}`).toStrictEqual(original()(b, context));
        expect(a.offset).toBe(b.offset);
      }
    });
  });

  describe('grouping per partition', () => {
    it('gives the groups kafkajs gives', () => {
      const original = kafkajsFastPaths.originals!.groupMessagesPerPartition;
      for (let seed = 1; seed <= 200; seed++) {
        const g = generator(seed);
        const partitionMetadata = Array.from({ length: g.int(8) }, (_, i) => ({ partitionId: i, leader: 0 }));
        const messages = Array.from({ length: g.int(500) }, (_, i) => ({ key: `k${g.int(50)}`, i }));
        const partitioner = ({ message }: { message: { key: string } }) => Number(message.key.slice(1)) % Math.max(1, partitionMetadata.length);
        const args = { topic: 't', partitionMetadata, messages, partitioner };
        expect(groupMessagesPerPartition(args), `seed ${seed}`).toStrictEqual(original(args));
      }
    });
  });
});

describe('keyedPartitioner', () => {
  it("answers as kafkajs's default partitioner, also after the partition count changes", () => {
    const keyed = keyedPartitioner(100)();
    const murmur2 = Partitioners.DefaultPartitioner();
    const g = generator(7);
    for (let i = 0; i < 5000; i++) {
      const partitionMetadata = Array.from({ length: i < 2500 ? 12 : 6 }, (_, p) => ({ partitionId: p, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
      const key = `host-${g.int(300)}.example`;
      const args = { topic: g.pick(['trawl.fetch', 'trawl.pages']), partitionMetadata, message: { key, value: null } };
      expect(keyed(args)).toBe(murmur2(args));
    }
  });

  it('leaves a message with its own partition, or without a string key, to kafkajs', () => {
    const keyed = keyedPartitioner()();
    const partitionMetadata = [0, 1, 2].map((p) => ({ partitionId: p, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
    expect(keyed({ topic: 't', partitionMetadata, message: { key: 'a', value: null, partition: 2 } })).toBe(2);
    const murmur2 = Partitioners.DefaultPartitioner();
    const buffer = { topic: 't', partitionMetadata, message: { key: Buffer.from('a'), value: null } };
    expect(keyed(buffer)).toBe(murmur2(buffer));
  });
});
