import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration tests talk to a real broker: rebalances and retry delays take seconds.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    // Integration files run two at a time: each uses its own topics and groups, and the broker
    // and the CPU-bound timing assertions (retry delays) stay honest on a two-core machine.
    maxWorkers: 2,
  },
});
