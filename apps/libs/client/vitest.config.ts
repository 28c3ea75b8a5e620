import { defineConfig } from 'vitest/config';

// The drift test builds the API's document in a child process: seconds on a busy machine.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 180_000,
  },
});
