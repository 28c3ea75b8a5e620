/**
 * A fixed pool of parse threads. Each page goes to the thread with the fewest pages queued, so a
 * slow page does not hold up the others. A thread that dies fails its pages (retriable: the
 * consumer retries them) and is replaced.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InvalidSpecError, type ExtractedItem, type PageCut, type ParseJob } from '@trawl/crawl';
import type { ParseReply, ParseRequest, ThreadReady } from './parse-messages.ts';

export interface ParsedOnThread {
  readonly links: string[];
  readonly nextPage: string | null;
  readonly items: ExtractedItem[];
  readonly cut: PageCut | null;
}

/** A parse that failed on a thread, with the thread's error name and retriable flag. */
export class ThreadParseError extends Error {
  override readonly name = 'ThreadParseError';
  constructor(
    message: string,
    readonly threadErrorName: string,
    readonly retriable: boolean,
  ) {
    super(message);
  }
}

interface Pending {
  resolve(page: ParsedOnThread): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  readonly pending: Map<number, Pending>;
  /** Resolves when the thread has loaded (compiling TypeScript takes seconds on a busy machine). */
  ready: Promise<void>;
}

/** Defined by the service build (compileService in @trawl/streams): the folder of the compiled threads. */
declare const __TRAWL_BUILD_DIR__: string | undefined;

/**
 * Compiled, the thread is the build's parse-thread.mjs. From source, it is booted through tsx's
 * `tsImport`, whatever started the process: a Worker does not get the main thread's loader hooks
 * (`node --import tsx`, `tsx main.ts`), `--import` in a Worker's execArgv is not honoured
 * (Node 20), and tsx's CJS API fails in an eval'd thread.
 */
function threadUrl(): URL {
  if (typeof __TRAWL_BUILD_DIR__ === 'string') return new URL('parse-thread.mjs', __TRAWL_BUILD_DIR__);
  const thread = new URL('./parse-thread.ts', import.meta.url).href;
  const tsxApi = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  return new URL(`data:text/javascript,${encodeURIComponent(`import { tsImport } from ${JSON.stringify(tsxApi)}; await tsImport(${JSON.stringify(thread)}, ${JSON.stringify(thread)});`)}`);
}
const THREAD_URL = threadUrl();

export class ParsePool {
  private readonly slots: Slot[] = [];
  private nextId = 0;
  private closed = false;

  constructor(size: number) {
    for (let i = 0; i < size; i++) this.slots.push(this.spawn({ pending: new Map() } as unknown as Slot));
  }

  /**
   * Every thread loaded. The worker waits for this before consuming: a first page that waits
   * seconds for its thread can straddle the group's first rebalance and be fetched twice.
   */
  ready(): Promise<void> {
    return Promise.all(this.slots.map((s) => s.ready)).then(() => undefined);
  }

  get size(): number {
    return this.slots.length;
  }

  parse(input: ParseJob): Promise<ParsedOnThread> {
    if (this.closed) return Promise.reject(new ThreadParseError('parse pool is closed', 'Closed', true));
    let slot = this.slots[0]!;
    for (const s of this.slots) if (s.pending.size < slot.pending.size) slot = s;
    const id = this.nextId++;
    const request: ParseRequest = { id, ...input };
    return new Promise<ParsedOnThread>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(slot: Slot): Slot {
    const worker = new Worker(THREAD_URL);
    slot.worker = worker;
    let loaded!: () => void;
    slot.ready = new Promise<void>((resolve) => (loaded = resolve));
    worker.on('message', (reply: ParseReply | ThreadReady) => {
      if ('ready' in reply) return loaded();
      const p = slot.pending.get(reply.id);
      if (!p) return;
      slot.pending.delete(reply.id);
      if (reply.ok) p.resolve({ links: reply.links, nextPage: reply.nextPage, items: reply.items, cut: reply.cut });
      else p.reject(rebuildError(reply));
    });
    const fail = (why: string) => {
      for (const p of slot.pending.values()) p.reject(new ThreadParseError(`parse thread ${why}`, 'ThreadDied', true));
      slot.pending.clear();
      if (!this.closed) this.spawn(slot);
    };
    worker.on('error', (err) => fail(`failed: ${err.message}`));
    worker.on('exit', (code) => {
      if (slot.worker === worker && !this.closed) fail(`exited with code ${code}`);
    });
    return slot;
  }
}

/** The thread's error as the class the consumer routes by (its `retriable` flag). */
function rebuildError(reply: Extract<ParseReply, { ok: false }>): Error {
  if (reply.name === 'InvalidSpecError') return new InvalidSpecError(reply.message);
  return new ThreadParseError(reply.message, reply.name, reply.retriable ?? true);
}
