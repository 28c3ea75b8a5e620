/**
 * A soft bound on a service's V8 heap: when the heap in use passes the ceiling, one full
 * collection is forced, and V8 sizes the heap again from what is really alive.
 *
 * Why. V8 sets the next old-generation limit from the live size its last mark-compact found, up to
 * ~4× it. On two busy cores its concurrent marking can run for seconds while a service allocates
 * at full speed, and everything allocated meanwhile counts as live for that cycle. A crawl's
 * first seconds did exactly that in the worker: a mark-compact "found" ~110 MB live, V8 let the
 * heap grow to ~430 MB (RSS ~550 MB), and the next mark-compact found 27 MB (apps/harness/bench/results/2026-11-24.md).
 * A hard cap (`--max-old-space-size`) bounds that too, but makes V8 collect more often in every
 * steady state, and cost 3–25% of the pace when measured; the ceiling costs nothing until the
 * heap passes it, and one collection of a heap that is mostly garbage takes milliseconds.
 *
 * A heap that is really that big (a large live set) is not collected over and over: after a
 * collection that left more than half the ceiling alive, the next one waits until the heap is
 * twice that live size.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';

export interface HeapCeilingOptions {
  /** The heap in use, in MB, past which a full collection is forced. */
  readonly ceilingMb: number;
  /** How often the heap is looked at. Default 250 ms. */
  readonly intervalMs?: number;
  readonly logger: Logger;
}

export interface HeapCeiling {
  /** Full collections forced so far. */
  readonly collections: number;
  stop(): void;
}

const MB = 1024 * 1024;

/** `gc()` without starting node with `--expose-gc`: the flag is set, then a new context has the function. */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

export function startHeapCeiling({ ceilingMb, intervalMs = 250, logger }: HeapCeilingOptions): HeapCeiling {
  if (!Number.isFinite(ceilingMb) || ceilingMb < 0) throw new RangeError(`heap ceiling must be a number of MB ≥ 0 (0 turns it off), got ${ceilingMb}`);
  if (ceilingMb === 0) return { collections: 0, stop: () => {} };
  const gc = exposeGc();
  const floor = ceilingMb * MB;
  let ceiling = floor;
  let collections = 0;
  const timer = setInterval(() => {
    const before = getHeapStatistics().used_heap_size;
    if (before <= ceiling) return;
    const started = performance.now();
    gc();
    const after = getHeapStatistics().used_heap_size;
    collections += 1;
    ceiling = after > floor / 2 ? Math.max(floor, 2 * after) : floor;
    logger.info(
      { heapBeforeMb: Math.round(before / MB), heapAfterMb: Math.round(after / MB), ms: Math.round(performance.now() - started), nextCeilingMb: Math.round(ceiling / MB) },
      'heap past its ceiling: collected',
    );
  }, intervalMs);
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    stop: () => clearInterval(timer),
  };
}
