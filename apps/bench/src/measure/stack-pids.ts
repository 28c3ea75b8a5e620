/** Pids of the local stack's parts, from the pid files `npm run stack` writes (read-only). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trawlHome } from '@trawl/streams';
import { findPids } from './proc-stat.ts';

export function kafkaBrokerPid(): number | null {
  try {
    const pid = Number(readFileSync(join(trawlHome(), 'run', 'kafka.pid'), 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0) return pid;
  } catch {
    // not the local stack (KAFKA_BROKERS elsewhere): look for a broker on this machine
  }
  return findPids('kafka.Kafka')[0] ?? null;
}
