/**
 * `npm run bench:decide -w @trawl/bench -- [--pages 100000] [--batch 50] [--order bfs|dfs]`
 *
 * The frontier's decider alone, no I/O: a synthetic job of N pages (10 links each, tree-shaped,
 * as the bench site) fed to `decideAll` in consumer-sized batches, as the frontier does. Prints the
 * cost per event as the job grows, for the two ways the frontier can call it:
 *
 *  - copy:     decideAll(state, batch)                      — the frontier before issue 8
 *  - in place: decideAll(state, batch, { reuseState: true }) — the frontier now
 *
 * and the cost of decide.ts's completion check after every page: the `for (const _ in outstanding)`
 * it ran before issue 8 against the counter comparison it runs now.
 */
import { parseArgs } from 'node:util';
import { decideAll, initialFrontierState, type FrontierEvent, type FrontierState } from '@trawl/crawl';
import { samples } from '@trawl/schemas';
import { crawlSpec } from '@trawl/store';
import { say, table } from './report/print-table.ts';
import { writeResults } from './report/write-results.ts';
import { optionsOrExit } from './bench-options.ts';

const { values } = optionsOrExit('npm run bench:decide', 'options: [--pages 100000] [--batch 50] [--links 10] [--order bfs|dfs]', () =>
  parseArgs({
    options: { pages: { type: 'string', default: '100000' }, batch: { type: 'string', default: '50' }, links: { type: 'string', default: '10' }, order: { type: 'string', default: 'bfs' } },
  }),
);
/** bfs: fetched in request order, as from a Kafka partition (outstanding grows with the job); dfs: newest first (outstanding stays small). */
const order = values.order === 'dfs' ? 'dfs' : 'bfs';
const pages = Number(values.pages);
const batch = Number(values.batch);
const k = Number(values.links);
const JOB = '00000000-0000-4000-8000-00000000be01';
const url = (i: number) => (i === 0 ? 'http://bench.test/' : `http://bench.test/p/${i}`);

function dispatch(): FrontierEvent {
  return {
    type: 'JobDispatched',
    data: { ...samples.JobDispatched, job_id: JOB, start_urls: [url(0)], spec: crawlSpec(null, { depth: 1_000, max_pages: 0 }) },
  };
}

/** Crawls the synthetic site through the decider; returns µs per page event per window of the job. */
function run(mode: 'copy' | 'in place', windows: number): { window: string; usPerEvent: number }[] {
  let state: FrontierState = decideAll(initialFrontierState(JOB), [dispatch()], { reuseState: true }).state;
  const queue: { fetchId: string; url: string; i: number }[] = Object.entries(state.outstanding).map(([fetchId, o]) => ({ fetchId, url: o.url, i: 0 }));
  const index = new Map<string, number>([[url(0), 0]]);
  const per = Math.ceil(pages / windows);
  const out: { window: string; usPerEvent: number }[] = [];
  let done = 0;
  let windowStart = performance.now();
  let windowEvents = 0;
  while (queue.length > 0) {
    const taken = order === 'bfs' ? queue.splice(0, batch) : queue.splice(Math.max(0, queue.length - batch), batch);
    const events: FrontierEvent[] = taken.map((q) => {
      const links: string[] = [];
      for (let c = q.i * k + 1; c <= q.i * k + k && c < pages; c++) links.push(url(c));
      links.push(url(0));
      return { type: 'PageFetched', data: { ...samples.PageFetched, job_id: JOB, fetch_id: q.fetchId, url: q.url, links, next_page: null, item_count: 0 } };
    });
    const d = decideAll(state, events, mode === 'in place' ? { reuseState: true } : {});
    state = d.state;
    for (const e of d.emit) {
      if (e.type !== 'FetchRequested') continue;
      const i = Number(/\/p\/(\d+)$/.exec(e.data.url)?.[1] ?? 0);
      index.set(e.data.url, i);
      queue.push({ fetchId: e.data.fetch_id, url: e.data.url, i });
    }
    done += events.length;
    windowEvents += events.length;
    if (done >= per * (out.length + 1) || queue.length === 0) {
      const now = performance.now();
      out.push({ window: `${per * out.length}–${Math.min(done, pages)}`, usPerEvent: Math.round(((now - windowStart) * 1000) / windowEvents) });
      windowStart = now;
      windowEvents = 0;
    }
  }
  if (state.status !== 'completed') throw new Error(`the synthetic job did not complete (${state.status})`);
  return out;
}

/** The completion check both ways (`for…in` as decide.ts ran it, the counters as now), n outstanding. */
function completionCheck(n: number): { forInUs: number; counterUs: number } {
  const outstanding: Record<string, { url: string; depth: number }> = {};
  for (let i = 0; i < n * 2; i++) outstanding[`f${i}`] = { url: url(i), depth: 1 };
  for (let i = 0; i < n; i++) delete outstanding[`f${i * 2}`]; // a live map: entries come and go
  const reps = 2_000;
  let empty = 0;
  let t = performance.now();
  for (let r = 0; r < reps; r++) {
    let has = false;
    for (const _ in outstanding) {
      has = true;
      break;
    }
    if (!has) empty++;
  }
  const forInUs = ((performance.now() - t) * 1000) / reps;
  const counters = { urls_seen: n * 2, pages_fetched: n, pages_failed: 0 };
  t = performance.now();
  for (let r = 0; r < reps; r++) if (counters.urls_seen === counters.pages_fetched + counters.pages_failed) empty++;
  const counterUs = ((performance.now() - t) * 1000) / reps;
  if (empty > reps * 2) throw new Error('unreachable');
  return { forInUs: Math.round(forInUs * 100) / 100, counterUs: Math.round(counterUs * 1000) / 1000 };
}

say(`decideAll on a synthetic ${pages}-page job, ${k} links/page, batches of ${batch} events, ${order} order (µs per page event, by window of the job)`);
const windows = 5;
const inPlace = run('in place', windows);
const copy = run('copy', windows);
say(table(['pages', 'copy µs/event', 'in place µs/event'], copy.map((c, i) => [c.window, c.usPerEvent, inPlace[i]?.usPerEvent])));
say();
const checks = [100, 1_000, 10_000, 50_000].map((n) => ({ n, ...completionCheck(n) }));
say('completion check per page event, by outstanding fetches (decide.ts maybeComplete, before → now):');
say(table(['outstanding', 'for…in µs', 'counter µs'], checks.map((c) => [c.n, c.forInUs, c.counterUs])));
const file = writeResults(`decide-${order}-${pages}-b${batch}.json`, { command: `npm run bench:decide -w @trawl/bench -- ${process.argv.slice(2).join(' ')}`, pages, batch, links: k, order, copy, inPlace, completionCheck: checks });
say();
say(`JSON: ${file}`);
