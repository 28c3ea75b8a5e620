import { describe, expect, it } from 'vitest';
import { decideAll, type FrontierEmit, type FrontierEvent } from './decide.ts';
import { initialFrontierState } from './frontier-state.ts';
import { cancelled, dispatched, failed, fetched, tick } from './test-events.ts';

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
  lostUrls: string[];
  declaredLost: string[];
  config: { n: number; maxDepth: number; maxPages: number; failRate: number; lossRate: number };
}

const T0 = Date.parse('2026-11-21T10:00:00.000Z'); // the test events' occurred_at
const DEADLINE_MS = 5_000;

/**
 * Crawls a random graph with answers delivered in random order, in random batches, with duplicates,
 * failures, lost fetches (never answered until after the job ended), clock ticks and sometimes a
 * cancel, checking the invariants after every batch.
 */
function simulate(seed: number): Run {
  const r = rng(seed);
  const n = 1 + Math.floor(r() * 60);
  const maxDepth = Math.floor(r() * 5) + (r() < 0.3 ? 100 : 0);
  const maxPages = r() < 0.5 ? 1 + Math.floor(r() * n * 1.5) : 10_000;
  const failRate = r() < 0.5 ? 0 : r() * 0.4;
  const lossRate = r() < 0.6 ? 0 : r() * 0.2;
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
  // Some pages are duplicates: their rel=canonical names another page (a chain, or a cycle, at
  // times), which the frontier requests in their stead. Drawn apart, so the runs stay what they were.
  const rc = rng(seed * 7919 + 1);
  const canonicals = Array.from({ length: n }, (_, i) => {
    const c = rc() < 0.15 ? Math.floor(rc() * n) : i;
    return c === i ? null : c;
  });
  const answer = (url: string, depth: number) => {
    const c = canonicals[indexOf(url)];
    return fetched(url, depth, edges[indexOf(url)]!, c === null || c === undefined ? {} : { canonical_url: page(c) });
  };

  let state = initialFrontierState('6f1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11');
  const emitted: FrontierEmit[] = [];
  const pending: { url: string; depth: number }[] = [];
  const lost: { url: string; depth: number }[] = [];
  const answered = new Set<string>();
  const declaredLost: string[] = [];
  const delivered: FrontierEvent[] = [];
  let completions = 0;
  let cancelledRun = false;
  // The edge's clock, and when the job last moved by it (an answer to a fetch it waited for).
  let clock = T0;
  let lastMove = T0;

  const apply = (events: FrontierEvent[]) => {
    const waiting = new Set(Object.values(state.outstanding).map((f) => f.url));
    // half the runs decide in place, as a frontier holding its state in memory would
    const d = decideAll(state, events, { reuseState: seed % 2 === 0, now: clock });
    state = d.state;
    if (completions === 0 && events.some((e) => (e.type === 'PageFetched' || e.type === 'PageFailed') && waiting.has(e.data.url))) lastMove = clock;
    for (const e of d.emit) {
      if (completions > 0) throw new Error(`seed ${seed}: emitted ${e.type} after the job ended`);
      if (e.type === 'FetchRequested') pending.push({ url: e.data.url, depth: e.data.depth });
      if (e.type === 'PageFailed') {
        // Only a tick declares a fetch lost, only past the deadline, only for a fetch with no answer.
        const tick = events.find((x) => x.type === 'Tick');
        if (e.data.error_code !== 'FETCH_LOST' || !tick) throw new Error(`seed ${seed}: the frontier emitted ${e.data.error_code}`);
        if (tick.at - lastMove < DEADLINE_MS) throw new Error(`seed ${seed}: lost ${tick.at - lastMove} ms after the job last moved`);
        if (answered.has(e.data.url)) throw new Error(`seed ${seed}: ${e.data.url} declared lost after its answer`);
        declaredLost.push(e.data.url);
      }
      if (e.type === 'JobCompleted') {
        completions++;
        if (e.data.outcome === 'finished') {
          // never early: every fetch requested so far has its answer, or was declared lost
          const requestedSoFar = [...emitted, ...d.emit].filter((x) => x.type === 'FetchRequested').map((x) => x.data.url);
          const unanswered = requestedSoFar.filter((u) => !answered.has(u) && !declaredLost.includes(u));
          if (unanswered.length > 0) throw new Error(`seed ${seed}: completed with ${unanswered.length} fetches unanswered`);
          if (e.data.pages_fetched + e.data.pages_failed !== e.data.urls_seen) throw new Error(`seed ${seed}: counters do not add up`);
        }
      }
      if (e.type === 'JobFailed') throw new Error(`seed ${seed}: unexpected JobFailed`);
    }
    emitted.push(...d.emit);
  };

  apply([dispatched([page(0)], { max_depth: maxDepth, max_pages: maxPages })]);
  let steps = 0;
  while ((pending.length > 0 || r() < 0.05) && steps++ < 10_000) {
    // Now and then a pause near the deadline, so ticks land just before and just after it.
    clock += r() < 0.1 ? DEADLINE_MS - 1_000 + Math.floor(r() * 2_000) : Math.floor(r() * 1_500);
    if (r() < 0.3) apply([tick(clock, DEADLINE_MS)]);
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
      if (r() < lossRate) {
        lost.push(job!); // its request never reaches a worker, or its outcome never reaches the frontier
        continue;
      }
      const event = r() < failRate ? failed(job!.url, job!.depth) : answer(job!.url, job!.depth);
      answered.add(job!.url);
      delivered.push(event);
      batch.push(event);
    }
    // The edge ticks now and then, and so may find the job silent for its deadline mid-crawl.
    if (r() < 0.1) batch.push(tick(clock, DEADLINE_MS));
    if (batch.length > 0) apply(batch);
    if (pending.length === 0 && delivered.length > 0 && r() < 0.5) apply([delivered[Math.floor(r() * delivered.length)]!]);
  }
  // Nothing left to answer: only the deadline can end a job that lost fetches — not a moment before.
  const justBefore = lastMove + DEADLINE_MS - 1 - (r() < 0.5 ? 0 : Math.floor(r() * 1_000));
  if (justBefore >= clock) {
    clock = justBefore;
    apply([tick(clock, DEADLINE_MS)]);
  }
  clock += DEADLINE_MS;
  apply([tick(clock, DEADLINE_MS)]);
  // The lost fetches' real outcomes, late: absorbed.
  for (const job of lost) {
    clock += 100;
    apply([answer(job.url, job.depth)]);
  }

  const reachable = new Set<string>();
  const stack = [0];
  while (stack.length) {
    const i = stack.pop()!;
    if (reachable.has(page(i))) continue;
    reachable.add(page(i));
    for (const l of edges[i]!) if (l.startsWith('http://site.example/')) stack.push(indexOf(l.split(/[#?]/)[0]!));
    if (canonicals[i] !== null) stack.push(canonicals[i]!);
  }
  const requestedUrls = emitted.flatMap((e) => (e.type === 'FetchRequested' ? [e.data.url] : []));
  return {
    emitted,
    completions,
    requestedUrls,
    cancelledRun,
    reachable,
    answeredAll: pending.length === 0,
    lostUrls: lost.map((l) => l.url),
    declaredLost,
    config: { n, maxDepth, maxPages, failRate, lossRate },
  };
}

describe('frontier decide: properties over random crawls', () => {
  it('completes exactly once, never early, never requests a URL twice, loses only past the deadline (2,000 random runs)', () => {
    let withLosses = 0;
    let midCrawl = 0; // runs where a pause past the deadline failed fetches whose answers came later
    for (let seed = 1; seed <= 2_000; seed++) {
      const run = simulate(seed);
      expect(run.completions, `seed ${seed}`).toBe(1);
      expect(new Set(run.requestedUrls).size, `seed ${seed}`).toBe(run.requestedUrls.length);
      expect(new Set(run.declaredLost).size, `seed ${seed}`).toBe(run.declaredLost.length);
      if (!run.cancelledRun) {
        expect(run.answeredAll, `seed ${seed}`).toBe(true);
        // Whatever was lost and not answered before the job ended was declared lost.
        for (const url of run.lostUrls) expect(run.declaredLost, `seed ${seed}`).toContain(url);
        const { n, maxDepth, maxPages, failRate, lossRate } = run.config;
        expect(run.requestedUrls.length, `seed ${seed}`).toBeLessThanOrEqual(maxPages);
        // Unbounded depth and pages, no failures, nothing declared lost: exactly the reachable set, whatever the order.
        if (maxDepth >= n && maxPages >= n && failRate === 0 && lossRate === 0 && run.declaredLost.length === 0) expect(new Set(run.requestedUrls), `seed ${seed}`).toEqual(run.reachable);
      }
      if (run.lostUrls.length > 0) withLosses++;
      if (run.declaredLost.length > run.lostUrls.length) midCrawl++;
    }
    expect(withLosses).toBeGreaterThan(200);
    expect(midCrawl).toBeGreaterThan(20);
  });
});
