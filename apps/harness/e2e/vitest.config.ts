import { defineConfig } from 'vitest/config';

/**
 * Test files that only `npm run test:chaos` runs (vitest.chaos.config.ts): long outages and a
 * broker restart, minutes each, and the end-to-end overlap run (a minute of a 3-s schedule; the
 * dispatcher's own overlap test covers its rules in every `npm test`). The cheap chaos (SIGKILLed processes, test/chaos/processes.test.ts)
 * runs here too.
 */
export const CHAOS_ONLY = ['test/chaos/outages.test.ts', 'test/chaos/overlap.test.ts'];

// Whole pipelines of child processes on the shared stack: one file at a time, generous hooks
// (stopping a pipeline deletes its topics and drops its database).
export default defineConfig({
  test: {
    exclude: ['**/node_modules/**', ...CHAOS_ONLY],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
