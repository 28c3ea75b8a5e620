import { describe, expect, it } from 'vitest';
import { PageIdMemory } from './page-id-memory.ts';

const at = (partition: number, offset: number) => ({ partition, offset: BigInt(offset) });

describe('PageIdMemory', () => {
  it('knows an id written within the window before the batch’s lowest offset of its partition', () => {
    const m = new PageIdMemory(100n);
    m.add(0, 10n, 'a');
    m.add(0, 50n, 'b');
    m.add(1, 5n, 'c');
    // Batch at offsets 120..130 of partition 0: the window starts at 20.
    const stored = m.storedIn([at(0, 130), at(0, 120)]);
    expect(stored('b')).toBe(true);
    expect(stored('a')).toBe(false); // before the window
    expect(stored('c')).toBe(false); // another partition, not in the batch
    expect(stored('zzz')).toBe(false);
  });

  it('answers over every partition of the batch, each with its own window (as the ClickHouse query does)', () => {
    const m = new PageIdMemory(100n);
    m.add(0, 90n, 'a');
    m.add(1, 90n, 'b');
    const stored = m.storedIn([at(0, 150), at(1, 300)]);
    expect(stored('a')).toBe(true); // partition 0's window starts at 50
    expect(stored('b')).toBe(false); // partition 1's starts at 200
  });

  it('forgets what falls out of the window, and keeps an id re-written later', () => {
    const m = new PageIdMemory(10n);
    for (let o = 0; o < 10_000; o++) m.add(0, BigInt(o), `id-${o}`);
    m.add(0, 10_000n, 'id-5'); // the same id again, later
    m.storedIn([at(0, 10_005)]);
    // Only offsets 9,995..10,000 are within the window: 6 ids (id-5 among them, at its later offset).
    expect(m.size).toBe(6);
    expect(m.storedIn([at(0, 10_005)])('id-5')).toBe(true);
    expect(m.storedIn([at(0, 10_005)])('id-9994')).toBe(false);
  });
});
