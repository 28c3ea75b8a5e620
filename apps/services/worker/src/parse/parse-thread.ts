/**
 * A parse thread (parse-pool.ts): parses one page with its job's rules, compiled once per job in
 * this thread. A CrawlError (a spec whose selectors or patterns cannot be used) comes back as its
 * code and message, for the pool to throw again as itself: an error's class does not cross threads.
 */
import { readlinkSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { parsePage, RulesCache, type ParseJob, type ParsedPage } from '@trawl/crawl/parse';
import { TrawlError } from '@trawl/schemas';

export type ParseAnswer =
  | { readonly ok: true; readonly page: Pick<ParsedPage, 'links' | 'nextPage' | 'canonical' | 'items' | 'cut'> }
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

export default function parseInThread(job: ThreadParseJob): ParseAnswer {
  if (Atomics.compareExchange(stamps, 2 * job.cell, -job.generation, BigInt(Date.now())) === -job.generation) Atomics.store(stamps, 2 * job.cell + 1, tid);
  try {
    const page = parsePage({ html: job.html, url: job.url, finalUrl: job.finalUrl, rules: rules.get(job.jobId, job.spec), limits: job.limits });
    return { ok: true, page: { links: page.links, nextPage: page.nextPage, canonical: page.canonical, items: page.items, cut: page.cut } };
  } catch (err) {
    if (err instanceof TrawlError) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
}
