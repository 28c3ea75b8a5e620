import { defineConfig } from 'vitest/config';

// Workers in child processes compile TypeScript when they start, on machines shared with Kafka and
// friends: generous timeouts, so a busy CPU slows the suite down instead of failing it.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
