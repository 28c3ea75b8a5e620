import { describe, expect, it } from 'vitest';
import { EventIdMemory } from './event-id-memory.ts';

const at = (partition: number, offset: number) => ({ partition, offset: BigInt(offset) });

describe('EventIdMemory', () => {
  it('says where an id was kept in a partition, as long as a later event can still reach it', () => {
    const m = new EventIdMemory(100n);
    m.add(0, 10n, 'a');
    m.add(0, 50n, 'b');
    m.add(1, 5n, 'c');
    // A batch at offsets 120..130 of partition 0: nothing after it can look back before 20.
    const kept = m.keptAt([at(0, 130), at(0, 120)]);
    expect(kept(0, 'b')).toBe(50n);
    expect(kept(0, 'a')).toBeUndefined(); // forgotten: out of every later event's window
    expect(kept(1, 'c')).toBe(5n); // another partition, not in the batch: kept
    expect(kept(0, 'c')).toBeUndefined();
    expect(kept(0, 'zzz')).toBeUndefined();
  });

  it('forgets what falls out of the window, and keeps an id written again later at its later offset', () => {
    const m = new EventIdMemory(10n);
    for (let o = 0; o < 10_000; o++) m.add(0, BigInt(o), `id-${o}`);
    m.add(0, 10_000n, 'id-5'); // the same id again, later
    m.keptAt([at(0, 10_005)]);
    // Only offsets 9,995..10,000 are within the window: 6 ids (id-5 among them, at its later offset).
    expect(m.size).toBe(6);
    expect(m.keptAt([at(0, 10_005)])(0, 'id-5')).toBe(10_000n);
    expect(m.keptAt([at(0, 10_005)])(0, 'id-9994')).toBeUndefined();
  });
});
