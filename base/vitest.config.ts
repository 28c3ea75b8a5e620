import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The loading test starts fresh Node processes under tsx: seconds each on a busy two-core machine.
    testTimeout: 60_000,
  },
});
