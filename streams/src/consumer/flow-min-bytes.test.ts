import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { batchBytes, FlowMinBytes } from './flow-min-bytes.ts';

const require = createRequire(import.meta.url);

describe('FlowMinBytes', () => {
  const clock = () => {
    let t = 0;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it('asks for 1 byte while nothing or a trickle comes', () => {
    const c = clock();
    const flow = new FlowMinBytes(64 * 1024, 50, 1_000, c.now);
    expect(+flow).toBe(1);
    for (let i = 0; i < 10; i++) {
      flow.observe(2_000);
      c.advance(100);
    }
    // 20 KB a second: 1 KB per 50 ms wait, far from 32 KiB.
    expect(+flow).toBe(1);
  });

  it('asks for the target while the flow fills half of it per wait, and 1 again once it has passed', () => {
    const c = clock();
    const flow = new FlowMinBytes(64 * 1024, 50, 1_000, c.now);
    for (let i = 0; i < 20; i++) {
      flow.observe(40_000);
      c.advance(50);
    }
    expect(+flow).toBe(64 * 1024);
    c.advance(1_000);
    expect(+flow).toBe(1);
  });

  it('is read afresh by kafkajs at each fetch request it encodes', async () => {
    const c = clock();
    const flow = new FlowMinBytes(64 * 1024, 50, 1_000, c.now);
    const request = require('kafkajs/src/protocol/requests/fetch/v11/request.js') as (o: object) => { encode(): Promise<{ buffer: Buffer }> };
    const encode = async () => (await request({ replicaId: -1, maxWaitTime: 50, minBytes: flow, maxBytes: 1024, topics: [], isolationLevel: 1 }).encode()).buffer;
    const low = await encode();
    flow.observe(10 * 1024 * 1024);
    const high = await encode();
    // replicaId (4 bytes), maxWaitTime (4), then minBytes.
    expect(low.readInt32BE(8)).toBe(1);
    expect(high.readInt32BE(8)).toBe(64 * 1024);
  });

  it('counts keys and values', () => {
    expect(batchBytes([{ key: Buffer.alloc(3), value: Buffer.alloc(10) }, { key: null, value: null }])).toBe(13);
  });
});
