/**
 * CPU seconds the ClickHouse server spent during a benchmark phase, read from /proc when the
 * server runs on this machine (the local stack). On a machine shared with other work,
 * wall-clock rates say little; CPU seconds per million events do.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS = 100; // USER_HZ on Linux

function cpuOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return undefined;
  }
}

/** The local clickhouse-server's pid, if there is exactly one. */
function serverPid(): number | undefined {
  try {
    const pids = execFileSync('pgrep', ['-f', 'clickhouse-server'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
    return pids.length === 1 ? pids[0] : undefined;
  } catch {
    return undefined;
  }
}

/** Starts measuring; `stop()` returns the server's CPU seconds since, or null when it cannot be read. */
export function clickhouseCpu(): { stop(): number | null } {
  const pid = serverPid();
  const start = pid === undefined ? undefined : cpuOf(pid);
  return {
    stop() {
      if (pid === undefined || start === undefined) return null;
      const end = cpuOf(pid);
      return end === undefined ? null : Number((end - start).toFixed(1));
    },
  };
}
