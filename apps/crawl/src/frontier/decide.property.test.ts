import { describe, expect, it } from 'vitest';
import { decideAll, type FrontierEmit, type FrontierEvent } from './decide.ts';
import { initialFrontierState } from './frontier-state.ts';
import { cancelled, dispatched, failed, fetched } from './test-events.ts';

/** Small seeded PRNG (mulberry32): a failing seed reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const page = (i: number) => `http://site.example/p${i}`;

interface Run {
  emitted: FrontierEmit[];
  completions: number;
  requestedUrls: string[];
  cancelledRun: boolean;
  reachable: Set<string>;
  answeredAll: boolean;
  config: { n: number; maxDepth: number; maxPages: number; failRate: number };
}

/**
 * Crawls a random graph with answers delivered in random order, in random batches, with duplicates,
 * failures and sometimes a cancel, checking the invariants after every batch.
 */
function simulate(seed: number): Run {
  const r = rng(seed);
  const n = 1 + Math.floor(r() * 60);
  const maxDepth = Math.floor(r() * 5) + (r() < 0.3 ? 100 : 0);
  const maxPages = r() < 0.5 ? 1 + Math.floor(r() * n * 1.5) : 10_000;
  const failRate = r() < 0.5 ? 0 : r() * 0.4;
  const willCancel = r() < 0.15;
  const edges: string[][] = Array.from({ length: n }, () =>
    Array.from({ length: Math.floor(r() * 6) }, () => {
      const x = r();
      if (x < 0.1) return 'http://elsewhere.example/x';
      if (x < 0.2) return `${page(Math.floor(r() * n))}#frag`;
      if (x < 0.25) return `${page(Math.floor(r() * n))}?utm_source=loop`;
      return page(Math.floor(r() * n));
    }),
  );
  const indexOf = (url: string) => Number(new URL(url).pathname.slice(2));

  let state = initialFrontierState('6f1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11');
  const emitted: FrontierEmit[] = [];
  const pending: { url: string; depth: number }[] = [];
  const answered = new Set<string>();
  const delivered: FrontierEvent[] = [];
  let completions = 0;
  let cancelledRun = false;

  const apply = (events: FrontierEvent[]) => {
    // half the runs decide in place, as a frontier holding its state in memory would
    const d = decideAll(state, events, { reuseState: seed % 2 === 0 });
    state = d.state;
    for (const e of d.emit) {
      if (completions > 0) throw new Error(`seed ${seed}: emitted ${e.type} after the job ended`);
      if (e.type === 'FetchRequested') pending.push({ url: e.data.url, depth: e.data.depth });
      if (e.type === 'JobCompleted') {
        completions++;
        if (e.data.outcome === 'finished') {
          // never early: every fetch requested so far has its answer
          const requestedSoFar = [...emitted, ...d.emit].filter((x) => x.type === 'FetchRequested').map((x) => x.data.url);
          const unanswered = requestedSoFar.filter((u) => !answered.has(u));
          if (unanswered.length > 0) throw new Error(`seed ${seed}: completed with ${unanswered.length} fetches unanswered`);
        }
      }
      if (e.type === 'JobFailed') throw new Error(`seed ${seed}: unexpected JobFailed`);
    }
    emitted.push(...d.emit);
  };

  apply([dispatched([page(0)], { max_depth: maxDepth, max_pages: maxPages })]);
  let steps = 0;
  while ((pending.length > 0 || r() < 0.05) && steps++ < 10_000) {
    const batch: FrontierEvent[] = [];
    const size = 1 + Math.floor(r() * 4);
    for (let k = 0; k < size && pending.length > 0; k++) {
      const roll = r();
      if (roll < 0.1 && delivered.length > 0) {
        batch.push(delivered[Math.floor(r() * delivered.length)]!); // redelivery
        continue;
      }
      if (willCancel && !cancelledRun && roll > 0.97) {
        batch.push(cancelled());
        cancelledRun = true;
        continue;
      }
      const [job] = pending.splice(Math.floor(r() * pending.length), 1);
      const event = r() < failRate ? failed(job!.url, job!.depth) : fetched(job!.url, job!.depth, edges[indexOf(job!.url)]!);
      answered.add(job!.url);
      delivered.push(event);
      batch.push(event);
    }
    if (batch.length > 0) apply(batch);
    if (pending.length === 0 && delivered.length > 0 && r() < 0.5) apply([delivered[Math.floor(r() * delivered.length)]!]);
  }

  const reachable = new Set<string>();
  const stack = [0];
  while (stack.length) {
    const i = stack.pop()!;
    if (reachable.has(page(i))) continue;
    reachable.add(page(i));
    for (const l of edges[i]!) if (l.startsWith('http://site.example/')) stack.push(indexOf(l.split(/[#?]/)[0]!));
  }
  const requestedUrls = emitted.flatMap((e) => (e.type === 'FetchRequested' ? [e.data.url] : []));
  return { emitted, completions, requestedUrls, cancelledRun, reachable, answeredAll: pending.length === 0, config: { n, maxDepth, maxPages, failRate } };
}

describe('frontier decide: properties over random crawls', () => {
  it('completes exactly once, never early, never requests a URL twice (2,000 random runs)', () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const run = simulate(seed);
      expect(run.completions, `seed ${seed}`).toBe(1);
      expect(new Set(run.requestedUrls).size, `seed ${seed}`).toBe(run.requestedUrls.length);
      if (!run.cancelledRun) {
        expect(run.answeredAll, `seed ${seed}`).toBe(true);
        const { n, maxDepth, maxPages, failRate } = run.config;
        expect(run.requestedUrls.length, `seed ${seed}`).toBeLessThanOrEqual(maxPages);
        // Unbounded depth and pages, no failures: exactly the reachable set, whatever the order.
        if (maxDepth >= n && maxPages >= n && failRate === 0) expect(new Set(run.requestedUrls), `seed ${seed}`).toEqual(run.reachable);
      }
    }
  });
});
