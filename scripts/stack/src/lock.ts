/**
 * One `up` or `down` at a time per TRAWL_HOME: several people and test runs share a checkout, and
 * two concurrent `up`s would both find the broker absent and both start one.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TrawlError } from '@trawl/streams';
import { isAlive } from './process.ts';

/** Another `up` or `down` held the lock past the timeout; running again later may succeed. */
export class StackLockTimeoutError extends TrawlError {
  readonly code = 'TRAWL_STACK_LOCKED';
  readonly retriable = true;
}

export async function withStackLock<T>(runDir: string, fn: () => Promise<T>, opts: { timeoutMs?: number; onWait?: (holder: number) => void } = {}): Promise<T> {
  const file = join(runDir, 'stack.lock');
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  mkdirSync(runDir, { recursive: true });
  let told = false;
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileSync(file, 'utf8').trim() || '0');
    if (!holder || !isAlive(holder)) {
      // Left by a run that was killed: nobody holds it.
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new StackLockTimeoutError(`another stack command (pid ${holder}) holds ${file}; wait for it, or delete the file if that process is not a stack command`);
    }
    if (!told) opts.onWait?.(holder);
    told = true;
    await sleep(250);
  }
  try {
    return await fn();
  } finally {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
    } catch {
      // Already gone.
    }
  }
}
