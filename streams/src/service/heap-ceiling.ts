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
 *
 * A heap that grows is looked at every `intervalMs`; one that stays still (an idle service) ever
 * less often, up to eight times that (2 s by default), so that an idle process is not woken four times a second for
 * nothing. The first look that sees it grow again brings the pace back: a heap climbs from an
 * idle size to the ceiling over many looks, and only the first of them comes later.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';

export interface HeapCeilingOptions {
  /** The heap in use, in MB, past which a full collection is forced. */
  readonly ceilingMb: number;
  /** How often a growing heap is looked at (a still one up to 8× less often). Default 250 ms. */
  readonly intervalMs?: number;
  readonly logger: Logger;
}

export interface HeapCeiling {
  /** Full collections forced so far. */
  readonly collections: number;
  stop(): void;
}

const MB = 1024 * 1024;
/** A still heap is looked at up to this many times less often than a growing one. */
const STILL_LOOKS_FACTOR = 8;

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
  let last = getHeapStatistics().used_heap_size;
  let waitMs = intervalMs;
  const look = () => {
    const before = getHeapStatistics().used_heap_size;
    // Growth by less than a MiB between looks is an idle process's own bookkeeping.
    waitMs = before > last + MB ? intervalMs : Math.min(waitMs * 2, STILL_LOOKS_FACTOR * intervalMs);
    last = before;
    if (before > ceiling) {
      const started = performance.now();
      gc();
      const after = getHeapStatistics().used_heap_size;
      last = after;
      waitMs = intervalMs;
      collections += 1;
      ceiling = after > floor / 2 ? Math.max(floor, 2 * after) : floor;
      logger.info(
        { heapBeforeMb: Math.round(before / MB), heapAfterMb: Math.round(after / MB), ms: Math.round(performance.now() - started), nextCeilingMb: Math.round(ceiling / MB) },
        'heap past its ceiling: collected',
      );
    }
    if (!stopped) timer = setTimeout(look, waitMs).unref();
  };
  let stopped = false;
  let timer = setTimeout(look, waitMs).unref();
  return {
    get collections() {
      return collections;
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
