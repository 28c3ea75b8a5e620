import { defineConfig } from 'vitest/config';

// `npm run test:chaos`: every fault scenario (test/chaos), one file and one test at a time, on the
// shared stack. Outages last a minute each, so tests get up to 10 minutes.
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
