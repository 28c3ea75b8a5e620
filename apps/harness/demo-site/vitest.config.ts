import { defineConfig } from 'vitest/config';

// Integration tests start real servers and Chromium on machines shared with Kafka and friends:
// generous timeouts, so a busy CPU slows the suite down instead of failing it.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
