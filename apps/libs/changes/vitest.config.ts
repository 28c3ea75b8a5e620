import { defineConfig } from 'vitest/config';

// Tests against the shared stack; a busy two-core machine must not time them out.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
