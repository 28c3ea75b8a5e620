/**
 * The frontier's job gauges, read from its state at scrape time: jobs open (new or running), the
 * age of the oldest running one, and the age a job is expected to stay under
 * (TRAWL_JOB_EXPECTED_SECONDS, default 3600), for the "job running past its expected time" alert.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Pool } from '@trawl/store';

export const DEFAULT_JOB_EXPECTED_SECONDS = 3_600;

export function jobExpectedSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_JOB_EXPECTED_SECONDS;
  if (raw === undefined || raw === '') return DEFAULT_JOB_EXPECTED_SECONDS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new RangeError(`TRAWL_JOB_EXPECTED_SECONDS must be a number of seconds > 0, got "${raw}"`);
  return n;
}

export function registerJobMetrics(registry: Registry, pool: Pool, expectedSeconds = jobExpectedSeconds()): void {
  let last: Promise<{ open: number; oldest: number }> | undefined;
  let lastAt = 0;
  // One query serves both gauges of a scrape.
  const read = () => {
    if (!last || Date.now() - lastAt > 1_000) {
      lastAt = Date.now();
      last = pool
        .query<{ open: string; oldest_ms: string | null }>(
          `SELECT count(*) AS open, (extract(epoch FROM now()) * 1000)::bigint - min(started_at) FILTER (WHERE status = 'running') AS oldest_ms
             FROM frontier_jobs WHERE status IN ('new', 'running')`,
        )
        .then(({ rows }) => ({ open: Number(rows[0]?.open ?? 0), oldest: Math.max(0, Number(rows[0]?.oldest_ms ?? 0) / 1000) }));
    }
    return last;
  };
  new Gauge({
    name: 'trawl_frontier_jobs_open',
    help: 'Crawl jobs the frontier has open (new or running).',
    registers: [registry],
    async collect() {
      this.set((await read()).open);
    },
  });
  new Gauge({
    name: 'trawl_frontier_oldest_open_job_seconds',
    help: 'Age of the oldest running job, from its start (0: none running).',
    registers: [registry],
    async collect() {
      this.set((await read()).oldest);
    },
  });
  new Gauge({ name: 'trawl_frontier_job_expected_seconds', help: 'How long a job is expected to run at most (TRAWL_JOB_EXPECTED_SECONDS).', registers: [registry] }).set(expectedSeconds);
}
