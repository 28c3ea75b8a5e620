import { defineConfig } from 'vitest/config';

// Integration tests talk to the shared Postgres and Kafka; a busy two-core machine must not time them out.
export default defineConfig({
  test: {
    // Their own topics (and groups): the jobs these tests submit must not land on the topics
    // `npm start` crawls from (10,000 dispatched test jobs were once crawled by the demo's frontier).
    env: { TRAWL_TOPIC_PREFIX: 'test.' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
