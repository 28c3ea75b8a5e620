/**
 * The loop watchdog: a thread that kills its process when the main thread's event loop has been
 * blocked for longer than a limit. Code that blocks the loop — a regular expression backtracking
 * for minutes, a parse that never ends — cannot be stopped from inside: no timer fires, no signal
 * is looked at, Kafka heartbeats stop and the group hands the partition to the next member, which
 * blocks on the same message in turn. From outside, the only stop is the process. A killed
 * process leaves its messages uncommitted; the next member re-reads them, counts their deliveries,
 * and after TRAWL_MAX_DELIVERIES dead-letters the one that keeps killing its consumer as poison
 * (consumer/delivery-verdict.ts).
 *
 * The main thread stamps the time into shared memory every `limitMs / 4` (at most every 5 s: with
 * the default 30 s limit a blocked loop is killed within 35 s, and an idle process is not woken
 * every second for it); the watchdog thread looks as often. Past the limit it writes one fatal JSON line to stderr (the
 * format of the service's logs; pino cannot run in the thread) and sends SIGKILL to its own
 * process: nothing on the blocked main thread would run a gentler exit. The thread is eval'd
 * JavaScript, so it needs neither a build step nor a TypeScript loader, compiled or not.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';

export interface LoopWatchdogOptions {
  /** How long the event loop may be blocked before the process is killed. */
  readonly limitMs: number;
  readonly logger: Logger;
  /** The service's name, for the fatal line. */
  readonly name: string;
}

export interface LoopWatchdog {
  stop(): Promise<void>;
}

const THREAD = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const { stamp, limitMs, checkMs, pid, name } = workerData;
const last = new BigInt64Array(stamp);
setInterval(() => {
  const blockedMs = Date.now() - Number(Atomics.load(last, 0));
  if (blockedMs <= limitMs) return;
  const line = { level: 60, time: Date.now(), pid, name, blockedMs, limitMs, msg: 'event loop blocked past its limit: killing the process (TRAWL_LOOP_LIMIT_MS)' };
  try { writeSync(2, JSON.stringify(line) + '\\n'); } catch {}
  process.kill(pid, 'SIGKILL');
}, checkMs);
`;

/** Starts the watchdog; `limitMs` 0 starts nothing. */
export function startLoopWatchdog({ limitMs, logger, name }: LoopWatchdogOptions): LoopWatchdog {
  if (limitMs <= 0) return { stop: async () => {} };
  const stamp = new SharedArrayBuffer(8);
  const last = new BigInt64Array(stamp);
  const touch = () => Atomics.store(last, 0, BigInt(Date.now()));
  touch();
  const checkMs = Math.max(10, Math.min(5_000, Math.floor(limitMs / 4)));
  const ticker = setInterval(touch, checkMs);
  ticker.unref();
  const thread = new Worker(THREAD, { eval: true, workerData: { stamp, limitMs, checkMs, pid: process.pid, name } });
  thread.unref();
  thread.on('error', (err) => logger.error({ err }, 'loop watchdog failed; the event loop is not watched'));
  logger.debug({ limitMs }, 'loop watchdog started');
  return {
    async stop() {
      clearInterval(ticker);
      await thread.terminate();
    },
  };
}
