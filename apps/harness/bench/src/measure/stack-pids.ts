/** Pids of the local stack's parts, from the pid files `npm run stack` writes (read-only). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trawlHome } from '@trawl/streams';
import { findPids } from './proc-stat.ts';

function pidFile(part: string): number | null {
  try {
    const pid = Number(readFileSync(join(trawlHome(), 'run', `${part}.pid`), 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0) return pid;
  } catch {
    // not the local stack's (an endpoint elsewhere): the caller looks on this machine
  }
  return null;
}

export function kafkaBrokerPid(): number | null {
  return pidFile('kafka') ?? findPids('kafka.Kafka')[0] ?? null;
}

/** The S3 server of the content store (S3Proxy locally): page bodies kept for the HTTP cache and formats. */
export function s3ServerPid(): number | null {
  return pidFile('s3') ?? findPids('s3proxy')[0] ?? null;
}

export function clickhouseServerPid(): number | null {
  return pidFile('clickhouse') ?? findPids('clickhouse-server')[0] ?? null;
}
