/**
 * CPU seconds the database spent on the benchmark, read from /proc (the local stack runs on this
 * machine): every second, the backends of the bench database are listed and their CPU time kept
 * (it only grows, and a backend that exits keeps its last reading). On a machine shared with
 * other work, wall-clock rates say little; CPU seconds per million events do.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

const TICKS = 100; // USER_HZ on Linux

export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return undefined;
  }
}

export function samplePostgresBackends(pool: pg.Pool, database: string): { stop(): Promise<number> } {
  const seen = new Map<number, { first: number; last: number }>();
  let sampling: Promise<void> = Promise.resolve();
  const sample = async (): Promise<void> => {
    const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]).catch(() => ({ rows: [] as { pid: number }[] }));
    for (const { pid } of rows) {
      const cpu = processCpuSeconds(pid);
      if (cpu === undefined) continue;
      const s = seen.get(pid);
      if (s) s.last = cpu;
      else seen.set(pid, { first: cpu, last: cpu });
    }
  };
  const timer = setInterval(() => (sampling = sampling.then(sample)), 1000);
  void (sampling = sampling.then(sample));
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      await sample();
      return [...seen.values()].reduce((s, v) => s + (v.last - v.first), 0);
    },
  };
}
