import { afterEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { startStatsLog } from './stats-log.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('startStatsLog', () => {
  it('logs the snapshot and the rate every interval until stopped', () => {
    vi.useFakeTimers();
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    let count = 0;
    const stop = startStatsLog(logger, 1000, { count: () => count, snapshot: () => ({ inFlight: 3 }) }, 'consumer stats');
    count = 500;
    vi.advanceTimersByTime(1000);
    stop();
    vi.advanceTimersByTime(5000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'consumer stats', inFlight: 3, perSecond: 500 });
  });

  it('is off with an interval of 0', () => {
    vi.useFakeTimers();
    const stop = startStatsLog(pino({ level: 'silent' }), 0, { count: () => 0, snapshot: () => ({}) });
    expect(vi.getTimerCount()).toBe(0);
    stop();
  });
});
