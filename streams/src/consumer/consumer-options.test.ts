import { describe, expect, it } from 'vitest';
import { resolveConsumerOptions } from './consumer-options.ts';

const base = { name: 'c', groupId: 'g', topics: ['t'], handler: () => undefined };

describe('consumer options', () => {
  it('refuses startInOrder with keyOrdering (a message held behind its key launches out of offset order)', () => {
    expect(() => resolveConsumerOptions({ ...base, startInOrder: true, keyOrdering: true })).toThrow(/startInOrder and keyOrdering cannot be combined/);
    expect(resolveConsumerOptions({ ...base, startInOrder: true }).startInOrder).toBe(true);
  });
});
