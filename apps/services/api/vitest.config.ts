import { defineConfig } from 'vitest/config';

// Integration tests run against the real local stack; each file has its own database and users,
// so files may run side by side (two at a time on the two-core machines).
export default defineConfig({
  test: {
    // Their own topics (and groups): the jobs these tests submit must not land on the topics
    // `npm start` crawls from (10,000 dispatched test jobs were once crawled by the demo's frontier).
    env: { TRAWL_TOPIC_PREFIX: 'test.' },
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
