import { defineConfig } from 'vitest/config';

// Integration tests share one Kafka, Postgres and ClickHouse: run files one after the other.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
