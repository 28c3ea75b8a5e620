import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Their own topics (and groups): the jobs these tests submit must not land on the topics
    // `npm start` crawls from (10,000 dispatched test jobs were once crawled by the demo's frontier).
    env: { TRAWL_TOPIC_PREFIX: 'test.' },
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
