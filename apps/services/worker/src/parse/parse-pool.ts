/**
 * Where the worker parses pages: a pool of threads (piscina), never the worker's main thread.
 *
 * A page's parse runs users' selectors over a page someone else wrote, and a selector whose cost
 * grows with the page can hold a thread for seconds or minutes (`a:has(~ b)` over 20,000 sibling
 * links: 26 s). On the main thread that stalled every other fetch of every tenant on the worker,
 * and past TRAWL_LOOP_LIMIT_MS the loop watchdog killed the process. Here:
 *
 * - A parse has a hard time limit, TRAWL_PARSE_TIMEOUT_MS, counted from the moment its thread
 *   starts it (a stamp in shared memory) — by the clock for its first SLOW_PARSE_MS, then by the CPU
 *   its thread gets (below: a slow parse runs on the CPU others leave, and is not charged for the
 *   time they took) — and within the page's budget, by the clock (whichever ends first stops it):
 *   past it, piscina terminates the thread, a new one replaces it, and the page fails with
 *   TRAWL_PARSE_TIMEOUT.
 *   A thread's heap is capped (TRAWL_PARSE_THREAD_MEMORY_MB): a parse past it loses its thread,
 *   not the process, and the page fails with TRAWL_PARSE_CRASHED. Neither is retried.
 * - The threads are shared between users by fair shares, and within a user between its jobs in
 *   turn (fair-shares.ts, the same shares as the fetch slots): a user with thousands of pages
 *   waiting does not hold every thread while another user's one page waits behind it, and a page
 *   is only handed to piscina when a thread is free, so its time limit measures its own parse.
 * - A parse still running after SLOW_PARSE_MS (a usual page takes 1–50 ms) gives its slot back
 *   to the other users' pages — the next starts on the spare thread the pool keeps started, and
 *   pages after it on threads the pool starts as they are needed, up to three times
 *   TRAWL_PARSE_THREADS in all — and its thread drops to the lowest CPU weight until it ends: a
 *   tenant's slow pages use the CPU others leave, not the CPU others need. The thread goes into a
 *   cgroup of the lowest weight (slow-lane.ts), which holds it back from every process on the
 *   machine, and to nice 19, which holds it back from the worker's other threads. Where the
 *   process may not raise a thread's priority back (no CAP_SYS_NICE, checked at start), slow parses
 *   are not niced: a thread left at nice 19 would parse every later page at it. Where there is no
 *   such cgroup (slow-lane.ts says when), nice alone orders threads within their scheduling group
 *   only, and under Linux's autogroups a slow parse still takes CPU from other processes (Kafka,
 *   Postgres, other services) as a normal thread would, bounded by the time limit.
 *
 * The main thread keeps fetching and producing while pages parse; the loop watchdog is a last
 * resort again. TRAWL_PARSE_THREADS=0 parses on the main thread (unbounded: for measurements).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { InvalidSpecError, ParseCrashedError, ParseTimeoutError, type ParseJob, type ParseStep } from '@trawl/crawl';
import { counterIn, defaultMetrics, liveGaugeIn, type Logger } from '@trawl/streams';
import type { Registry } from 'prom-client';
import { FairShares, type FairTurn, type SlotLease } from '../fair-shares.ts';
import type { ParseAnswer, ThreadParseJob } from './parse-thread.ts';
import { cgroupLane, type SlowLane } from './slow-lane.ts';

declare const __TRAWL_BUILD_DIR__: string | undefined;

export interface ParsePoolOptions {
  /** Threads parsing at once; 0: parse on the main thread. */
  readonly threads: number;
  /** A parse's limit from its start on a thread. */
  readonly timeoutMs: number;
  /** A thread's old-generation heap, in MiB. */
  readonly memoryMb: number;
  /** A thread beyond `threads` (started beside slow parses) idle this long ends. */
  readonly idleTimeoutMs: number;
  /** TRAWL_PARSE_SLOW_CGROUP: where slow parses' threads go (slow-lane.ts); `off` for nice alone. */
  readonly slowCgroup?: string;
}

export const DEFAULT_PARSE_TIMEOUT_MS = 5_000;
/** A parse running longer than this is slow: it frees its slot and yields the CPU. */
export const SLOW_PARSE_MS = 250;
/** How often running parses are checked against SLOW_PARSE_MS and the time limit: the limits' granularity. */
const SWEEP_MS = 50;

interface Running {
  readonly lease: SlotLease;
  readonly stop: AbortController;
  /** The thread held back (the slow lane, nice 19 or both), or 0. */
  lowered: number;
  slow: boolean;
  /** The parse's thread, once slow (0: unknown). */
  tid: number;
  /** The thread's CPU time when the parse went slow, in ns: from then on its limit counts its CPU. */
  cpuAtSlow?: number;
  timedOut: boolean;
}
/** The lowest priority there is (Linux nice 19). */
const LOWEST_PRIORITY = 19;
export const DEFAULT_PARSE_THREAD_MEMORY_MB = 512;

/**
 * Whether this process may raise a thread's priority back after lowering it: CAP_SYS_NICE (bit 23 of
 * the effective capabilities; root has it). Without it a lowered thread would stay at nice 19 for
 * every later page, so slow parses are then not lowered at all (they still give their slot back).
 */
export function mayRaisePriority(status = readProcStatus()): boolean {
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return hex !== undefined && (BigInt(`0x${hex}`) & (1n << 23n)) !== 0n;
}

/**
 * A thread of this process's time on a CPU so far, in ns (Linux's schedstat), or 0 where it cannot
 * be read. A slow parse's limit counts it rather than the clock: held back to the CPU others leave,
 * it is not charged for the time others took, and the page's budget still bounds it by the clock.
 */
function threadCpuNs(tid: number): number {
  if (tid === 0) return 0;
  try {
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
  } catch {
    return 0;
  }
}

function readProcStatus(): string {
  try {
    return readFileSync('/proc/self/status', 'utf8');
  } catch {
    return '';
  }
}

/** TRAWL_PARSE_THREADS (default: the cores, at least 2), TRAWL_PARSE_TIMEOUT_MS (5000), TRAWL_PARSE_THREAD_MEMORY_MB (512), TRAWL_PARSE_SLOW_CGROUP (a child of the worker's cgroup; `off`). */
export function parsePoolOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ParsePoolOptions {
  const whole = (name: string, dflt: number, min: number) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return dflt;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min) throw new RangeError(`${name} must be a whole number of at least ${min}, not ${JSON.stringify(raw)}`);
    return n;
  };
  return {
    threads: whole('TRAWL_PARSE_THREADS', Math.max(2, availableParallelism()), 0),
    timeoutMs: whole('TRAWL_PARSE_TIMEOUT_MS', DEFAULT_PARSE_TIMEOUT_MS, 1),
    // A thread's code alone (cheerio, the item schema's validator, the XPath engine) needs ~10 MiB
    // before its first page; under 40 it may not start at all, and then no page would ever fail.
    memoryMb: whole('TRAWL_PARSE_THREAD_MEMORY_MB', DEFAULT_PARSE_THREAD_MEMORY_MB, 40),
    idleTimeoutMs: 30_000,
    ...(env.TRAWL_PARSE_SLOW_CGROUP === undefined ? {} : { slowCgroup: env.TRAWL_PARSE_SLOW_CGROUP }),
  };
}

/**
 * The thread's module: compiled beside the service's main module (`trawl up` and production), or
 * the TypeScript source under tsx (tests), which the thread then needs as its loader too.
 */
function threadEntry(): { filename: string; execArgv?: string[] } {
  if (typeof __TRAWL_BUILD_DIR__ === 'string') return { filename: new URL('parse-thread.mjs', __TRAWL_BUILD_DIR__).href };
  const filename = fileURLToPath(new URL('./parse-thread.ts', import.meta.url));
  const hasTsx = process.execArgv.some((arg, i) => arg.includes('tsx') && (i === 0 || process.execArgv[i - 1] === '--import' || arg.startsWith('--import')));
  return { filename, execArgv: hasTsx ? process.execArgv : [...process.execArgv, '--import', 'tsx'] };
}

export class ParsePool {
  private readonly piscina: Piscina<ThreadParseJob, ParseAnswer>;
  private readonly slots: FairShares;
  private readonly stopped;
  private readonly slow;
  /** Whether slow parses are lowered in priority: only where their priority can be raised back (mayRaisePriority). */
  private renice = mayRaisePriority();
  /** Where slow parses' threads go, across processes; undefined: nice alone. */
  private readonly lane: SlowLane | undefined;
  /** Tags each parse's cell, so a stopped thread that starts its task late cannot stamp the next parse's cell. */
  private generation = 0n;
  /**
   * Where threads stamp each running parse's start (epoch ms) and their thread id, two cells per
   * parse running: shared with every thread once, at its start (workerData), so a page's message
   * carries only its cell's index.
   */
  private readonly stamps: BigInt64Array;
  private readonly freeCells: number[];
  /** Parses running, by cell: what the sweep checks. */
  private readonly running = new Map<number, Running>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    readonly options: ParsePoolOptions,
    private readonly logger?: Logger,
    metrics: Registry = defaultMetrics,
    /** A page's user and job, by its signal (FetchSlots.turnOf); a page it does not know is its job's own tenant. */
    private readonly turnOf: (signal: AbortSignal | undefined) => FairTurn | undefined = () => undefined,
  ) {
    if (options.threads < 1) throw new RangeError('a ParsePool needs at least one thread; with 0, parse in-line');
    const maxThreads = options.threads * 3;
    this.stamps = new BigInt64Array(new SharedArrayBuffer(16 * maxThreads));
    this.freeCells = Array.from({ length: maxThreads }, (_, i) => i);
    const entry = threadEntry();
    this.piscina = new Piscina<ThreadParseJob, ParseAnswer>({
      ...entry,
      // One thread more than the slots, started and idle: the page that a slow parse's slot goes
      // to starts on it at once, not after a thread's start (~160 ms, seconds on a busy machine).
      minThreads: options.threads + 1,
      maxThreads,
      idleTimeout: options.idleTimeoutMs,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
      workerData: { stamps: this.stamps },
    });
    this.slots = new FairShares(options.threads, { maxDetached: options.threads * 2 });
    const lane = cgroupLane({ ...(options.slowCgroup === undefined ? {} : { cgroup: options.slowCgroup }) });
    if ('lane' in lane) {
      this.lane = lane.lane;
      logger?.info({ slowLane: lane.lane.kind }, 'slow parses run in a cgroup of the lowest CPU weight');
    } else {
      logger?.warn({ reason: lane.reason }, 'slow parses are held back by nice 19 alone, within this process\'s scheduling group: they still take CPU from other processes');
    }
    this.slow = counterIn(metrics, 'trawl_parse_slow_total', `Parses still running after ${SLOW_PARSE_MS} ms: their slot went to other pages and their thread to the lowest priority.`, []);
    this.stopped = counterIn(metrics, 'trawl_parse_stopped_total', 'Parses whose thread was stopped: past TRAWL_PARSE_TIMEOUT_MS (timeout), past TRAWL_PARSE_THREAD_MEMORY_MB or crashed (crashed).', ['reason']);
    liveGaugeIn(metrics, 'trawl_parse_threads_busy', 'Parse threads working on a page.', []).add(() => [[{}, this.slots.busy]]);
    liveGaugeIn(metrics, 'trawl_parse_queued', 'Pages fetched and waiting for a parse thread.', []).add(() => [[{}, this.slots.queued]]);
  }

  /** The PageProcessor's parse step: `job` parsed on a thread, in its user's and job's turn, within the limits. */
  readonly parse: ParseStep = (job, options = {}) =>
    this.slots.run(this.turnOf(options.signal) ?? { tenant: `job:${job.jobId}`, job: job.jobId }, (lease) => this.parseNow(job, lease, options.signal), options.signal);

  private async parseNow(job: ParseJob, lease: SlotLease, page?: AbortSignal): Promise<Extract<ParseAnswer, { ok: true }>['page']> {
    // At most maxThreads parses hold a slot or a detached one (FairShares), so a cell is always free.
    const cell = this.freeCells.pop()!;
    // Not started: minus this parse's generation, which the thread swaps for its start time (parse-thread.ts).
    const generation = ++this.generation;
    Atomics.store(this.stamps, 2 * cell + 1, 0n);
    Atomics.store(this.stamps, 2 * cell, -generation);
    const stop = new AbortController();
    const run: Running = { lease, stop, lowered: 0, slow: false, tid: 0, timedOut: false };
    const onPageAbort = () => stop.abort(page!.reason);
    page?.addEventListener('abort', onPageAbort, { once: true });
    this.running.set(cell, run);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    let answer: ParseAnswer | undefined;
    try {
      answer = await this.piscina.run({ ...job, cell, generation }, { signal: stop.signal });
    } catch (err) {
      if (run.timedOut) {
        this.stopped.inc({ reason: 'timeout' });
        throw new ParseTimeoutError(`the parse of ${job.url} ran past ${this.options.timeoutMs} ms (TRAWL_PARSE_TIMEOUT_MS) and was stopped`, { cause: err });
      }
      // The page's own budget ran out (or the worker stops): the budget says so itself.
      if (page?.aborted) throw page.reason;
      this.stopped.inc({ reason: 'crashed' });
      const why = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? `used more than ${this.options.memoryMb} MiB (TRAWL_PARSE_THREAD_MEMORY_MB)` : `crashed its thread: ${(err as Error).message}`;
      throw new ParseCrashedError(`the parse of ${job.url} ${why}`, { cause: err });
    } finally {
      page?.removeEventListener('abort', onPageAbort);
      this.running.delete(cell);
      this.freeCells.push(cell);
      if (this.running.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
      // A thread that answered goes on parsing other pages, at its usual priority again; one stopped is gone.
      if (run.lowered > 0 && answer !== undefined) this.restore(run.lowered);
    }
    if (answer.ok) return answer.page;
    if (answer.code === 'TRAWL_INVALID_SPEC') throw new InvalidSpecError(answer.message);
    throw new ParseCrashedError(`the parse of ${job.url} failed: ${answer.message} (${answer.code})`);
  }

  /**
   * Every SWEEP_MS while parses run (one timer for all, none when idle): a parse running past
   * SLOW_PARSE_MS steps aside, one past the time limit is stopped. A parse not yet started on its
   * thread (stamp 0: a thread starting, the message on its way) has used none of its time.
   */
  private sweep(): void {
    const now = Date.now();
    for (const [cell, run] of this.running) {
      const startedAt = Number(Atomics.load(this.stamps, 2 * cell));
      if (startedAt <= 0) continue;
      const ran = run.cpuAtSlow === undefined ? now - startedAt : SLOW_PARSE_MS + (threadCpuNs(run.tid) - run.cpuAtSlow) / 1e6;
      if (ran >= this.options.timeoutMs && !run.timedOut) {
        run.timedOut = true;
        run.stop.abort();
      } else if (ran >= SLOW_PARSE_MS && !run.slow) {
        run.slow = true;
        run.tid = Number(Atomics.load(this.stamps, 2 * cell + 1));
        run.lowered = this.slowedDown(run.lease, run.tid);
        const cpu = threadCpuNs(run.tid);
        if (cpu > 0) run.cpuAtSlow = cpu;
      }
    }
  }

  /** A parse gone slow: its slot to the others, its thread (`tid`) to the slow lane and the lowest priority. The thread held back, or 0. */
  private slowedDown(lease: SlotLease, tid: number): number {
    this.slow.inc();
    lease.detach();
    if (tid === 0) return 0;
    const entered = this.lane?.enter(tid) ?? false;
    if (!this.renice) return entered ? tid : 0;
    try {
      setPriority(tid, LOWEST_PRIORITY);
      return tid;
    } catch {
      return entered ? tid : 0;
    }
  }

  private restore(tid: number): void {
    this.lane?.leave(tid);
    if (!this.renice) return;
    try {
      setPriority(tid, 0);
    } catch (err) {
      // ESRCH: the thread ended meanwhile, nothing to restore. Anything else: stop lowering.
      if ((err as { code?: string }).code === 'ESRCH' || (err as { info?: { code?: string } }).info?.code === 'ESRCH') return;
      this.renice = false;
      this.logger?.warn({ err, tid }, 'a parse thread\'s priority could not be raised back: slow parses keep their priority from now on');
    }
  }

  /** Ends the threads; parses still running are stopped. */
  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
