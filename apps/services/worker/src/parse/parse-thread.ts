/**
 * A parse thread (parse-pool.ts): parses one page with its job's rules, compiled once per job in
 * this thread, and derives its text and Markdown when the job keeps them (parse-work.ts). A CrawlError (a spec whose selectors or patterns cannot be used) comes back as its
 * code and message, for the pool to throw again as itself: an error's class does not cross threads.
 */
import { readlinkSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { RulesCache, type ParseJob } from '@trawl/crawl/parse';
import { TrawlError } from '@trawl/schemas';
import { loadDerivers, parseWork, type ParsedWork } from './parse-work.ts';

export type ParseAnswer =
  | { readonly ok: true; readonly page: ParsedWork }
  | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * A page to parse, with its cell in the pool's shared stamps (workerData.stamps): when its parse
 * starts, the thread writes the time (epoch ms, at 2 × cell: the pool's time limit counts from it)
 * and its own id (at 2 × cell + 1: the pool lowers a slow parse's priority).
 */
export interface ThreadParseJob extends ParseJob {
  readonly cell: number;
  /** What the cell holds, negated, until this parse starts: a stopped thread's late start stamps nothing. */
  readonly generation: bigint;
}

const stamps = (workerData as { stamps: BigInt64Array }).stamps;

/** This thread's id in the kernel (Linux: /proc/thread-self → `<pid>/task/<tid>`); 0 where there is none. */
function threadId(): bigint {
  try {
    return BigInt(readlinkSync('/proc/thread-self').split('/').pop()!);
  } catch {
    return 0n;
  }
}

const tid = threadId();
const rules = new RulesCache(256);

export default async function parseInThread(job: ThreadParseJob): Promise<ParseAnswer> {
  // The derivers are loaded by a thread's first page that needs them, before its parse is stamped
  // as started: their load (PDF.js: ~0.4 s, seconds on a busy machine) is no page's parse time.
  await loadDerivers(job);
  if (Atomics.compareExchange(stamps, 2 * job.cell, -job.generation, BigInt(Date.now())) === -job.generation) Atomics.store(stamps, 2 * job.cell + 1, tid);
  try {
    return { ok: true, page: await parseWork(job, rules) };
  } catch (err) {
    if (err instanceof TrawlError) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
}
