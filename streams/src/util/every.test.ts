import { describe, expect, it } from 'vitest';
import { onceEvery } from './every.ts';

describe('onceEvery', () => {
  it('opens the first time, then once the interval has passed', () => {
    let now = 1_000;
    const gate = onceEvery(60_000, () => now);
    expect(gate()).toBe(true);
    now += 59_999;
    expect(gate()).toBe(false);
    now += 1;
    expect(gate()).toBe(true);
    expect(gate()).toBe(false);
  });
});
