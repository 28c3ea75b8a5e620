import { defineConfig } from 'vitest/config';

/**
 * Test files that only `npm run test:chaos` runs (vitest.chaos.config.ts): long outages and a
 * broker restart, minutes each, a three-broker cluster with a broker killed under writes (a minute), the registry's
 * schemas moved from Postgres into the log and the registry restarted without Postgres (a minute), and the end-to-end overlap run (a minute of a 3-s schedule; the
 * dispatcher's own overlap test covers its rules in every `npm test`). The cheap chaos (SIGKILLed processes, test/chaos/processes.test.ts)
 * runs here too. The nemesis soak's 5-minute run (test/chaos/soak.test.ts, ~8 minutes with its own stack), the network
 * faults through namespaces (network.test.ts, ~4 minutes) and the three brokers rolled and one's disk filled
 * (brokers3-faults.test.ts, ~6 minutes) run there only.
 */
export const CHAOS_ONLY = ['test/chaos/outages.test.ts', 'test/chaos/overlap.test.ts', 'test/chaos/brokers3.test.ts', 'test/chaos/registry-log.test.ts', 'test/chaos/soak.test.ts', 'test/chaos/network.test.ts', 'test/chaos/brokers3-faults.test.ts'];

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
