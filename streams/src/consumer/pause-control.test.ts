import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { PauseControl } from './pause-control.ts';

describe('PauseControl#resumesWithinMs', () => {
  const calls: string[] = [];
  const consumer = { pause: () => void calls.push('pause'), resume: () => void calls.push('resume') };

  it('says how soon the first paused partition resumes: its last timed reason, or 0 for backpressure', () => {
    const pauses = new PauseControl(() => consumer, pino({ level: 'silent' }));
    const now = Date.now();
    expect(pauses.resumesWithinMs(now)).toBeUndefined();
    pauses.pauseUntil('t', 0, 'due', now + 30_000);
    pauses.pauseUntil('t', 1, 'due', now + 5_000);
    pauses.pauseUntil('t', 1, 'backoff', now + 8_000);
    expect(pauses.resumesWithinMs(now)).toBe(8_000);
    pauses.resume('t', 1, 'backoff');
    expect(pauses.resumesWithinMs(now)).toBe(5_000);
    pauses.pause('t', 0, 'full');
    expect(pauses.resumesWithinMs(now)).toBe(0);
    pauses.clear();
    expect(pauses.resumesWithinMs(now)).toBeUndefined();
  });
});
