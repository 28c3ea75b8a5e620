import { getHeapStatistics } from 'node:v8';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startHeapCeiling } from './heap-ceiling.ts';

const MB = 1024 * 1024;

function capturingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

/** Allocates ~`mb` MB of small objects that are garbage as soon as this returns. */
function churn(mb: number): number {
  let keep: { i: number; s: string }[] = [];
  for (let i = 0; i < mb * 12_000; i++) keep.push({ i, s: `x${i}` });
  const n = keep.length;
  keep = [];
  return n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('startHeapCeiling', () => {
  it('forces a collection once the heap in use passes the ceiling, and says what it freed', async () => {
    const { logger, lines } = capturingLogger();
    const ceilingMb = Math.ceil(getHeapStatistics().used_heap_size / MB) + 20;
    const ceiling = startHeapCeiling({ ceilingMb, intervalMs: 20, logger });
    try {
      // Grow the heap past the ceiling in steps; the ceiling looks every 20 ms.
      const held: unknown[] = [];
      for (let i = 0; i < 10 && ceiling.collections === 0; i++) {
        held.push(Array.from({ length: 200_000 }, (_, j) => ({ j, s: `y${j}` })));
        await sleep(40);
      }
      expect(ceiling.collections).toBeGreaterThanOrEqual(1);
      const line = lines.find((l) => l.msg === 'heap past its ceiling: collected')!;
      expect(line).toBeDefined();
      expect(line.heapBeforeMb as number).toBeGreaterThan(ceilingMb);
      expect(line.heapAfterMb as number).toBeLessThanOrEqual(line.heapBeforeMb as number);
      expect(held.length).toBeGreaterThan(0);
    } finally {
      ceiling.stop();
    }
  });

  it('frees garbage the old generation still holds', async () => {
    const { logger, lines } = capturingLogger();
    // Objects that live through a few scavenges are promoted; dropped, they stay in the heap until
    // the next mark-compact, which an idle process may not run for a long time.
    let held: unknown[] | undefined = [];
    for (let i = 0; i < 4; i++) {
      held.push(Array.from({ length: 150_000 }, (_, j) => ({ j, s: `z${j}` })));
      await sleep(10);
    }
    held = undefined;
    const usedMb = getHeapStatistics().used_heap_size / MB;
    const ceiling = startHeapCeiling({ ceilingMb: Math.floor(usedMb - 20), intervalMs: 5, logger });
    try {
      await sleep(50);
      expect(ceiling.collections).toBe(1);
      expect(lines[0]!.heapAfterMb as number).toBeLessThan((lines[0]!.heapBeforeMb as number) - 20);
      expect(held).toBeUndefined();
    } finally {
      ceiling.stop();
    }
  });

  it('does not collect over and over when most of the heap is really alive', async () => {
    const { logger, lines } = capturingLogger();
    const live = Array.from({ length: 400_000 }, (_, j) => ({ j, s: `live${j}` })); // ~30 MB alive
    const ceilingMb = Math.max(8, Math.floor(getHeapStatistics().used_heap_size / MB / 2));
    const ceiling = startHeapCeiling({ ceilingMb, intervalMs: 20, logger });
    try {
      await sleep(100);
      for (let i = 0; i < 5; i++) {
        churn(1);
        await sleep(20);
      }
      // The first check collects; what it leaves (the live array) sets the next ceiling to twice that.
      expect(ceiling.collections).toBe(1);
      const line = lines[0]!;
      expect(line.nextCeilingMb as number).toBeGreaterThanOrEqual(2 * (line.heapAfterMb as number) - 1);
      expect(live).toHaveLength(400_000);
    } finally {
      ceiling.stop();
    }
  });

  it('is off at 0 and refuses a ceiling that is not a number of MB', () => {
    const { logger } = capturingLogger();
    const off = startHeapCeiling({ ceilingMb: 0, logger });
    expect(off.collections).toBe(0);
    off.stop();
    expect(() => startHeapCeiling({ ceilingMb: Number.NaN, logger })).toThrow(/number of MB/);
    expect(() => startHeapCeiling({ ceilingMb: -1, logger })).toThrow(/number of MB/);
  });
});
