import { defineConfig } from 'vitest/config';

// Integration tests talk to the shared Postgres and Kafka; a busy two-core machine must not time them out.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
