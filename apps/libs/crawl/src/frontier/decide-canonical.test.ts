import { describe, expect, it } from 'vitest';
import { decide, type FrontierEmit, type FrontierEvent } from './decide.ts';
import { initialFrontierState, type FrontierState } from './frontier-state.ts';
import { dispatched, fetched, JOB } from './test-events.ts';

function given(...events: FrontierEvent[]): FrontierState {
  return events.reduce((s, e) => decide(s, e).state, initialFrontierState(JOB));
}
const requested = (emit: readonly FrontierEmit[]) => emit.flatMap((e) => (e.type === 'FetchRequested' ? [`${e.data.url}@${e.data.depth}`] : []));

const ROOT = 'http://site.example/';
const REF = 'http://site.example/jobs/1?ref=home';
const JOB1 = 'http://site.example/jobs/1';

describe('frontier decide: duplicates by rel=canonical (PageFetched.canonical_url)', () => {
  it('counts a duplicate and requests its canonical page in its stead, at the same depth, before its links', () => {
    const start = given(dispatched([ROOT], { max_depth: 1, honour_canonical: true }), fetched(ROOT, 0, [REF]));
    const { state, emit } = decide(start, fetched(REF, 1, ['http://site.example/a'], { canonical_url: JOB1 }));
    // max_depth 1 stops the duplicate's links; its canonical is the same page, not a hop further.
    expect(requested(emit)).toEqual([`${JOB1}@1`]);
    expect(state.counters.duplicates).toBe(1);
    const done = decide(state, fetched(JOB1, 1, [], { item_count: 3 }));
    expect(done.emit.map((e) => e.type)).toEqual(['JobCompleted']);
    expect(done.state.counters).toMatchObject({ pages_fetched: 3, items_extracted: 3, urls_seen: 3, duplicates: 1 });
  });

  it('asks nothing more when the canonical page was already seen, and asks it once for many duplicates', () => {
    const start = given(dispatched([ROOT], { honour_canonical: true }), fetched(ROOT, 0, [JOB1, REF, `${JOB1}?sort=asc`]));
    const first = decide(start, fetched(REF, 1, [], { canonical_url: JOB1 }));
    expect(requested(first.emit)).toEqual([]);
    const second = decide(first.state, fetched(`${JOB1}?sort=asc`, 1, [], { canonical_url: JOB1 }));
    expect(requested(second.emit)).toEqual([]);
    expect(second.state.counters.duplicates).toBe(2);
    const last = decide(second.state, fetched(JOB1, 1));
    expect(last.emit.map((e) => e.type)).toEqual(['JobCompleted']);
  });

  it('requests the canonical page of a sitemap-only crawl, which follows no link', () => {
    const start = given(dispatched([REF], { sitemap: 'only', honour_canonical: true }));
    const { emit } = decide(start, fetched(REF, 0, ['http://site.example/b'], { canonical_url: JOB1 }));
    expect(requested(emit)).toEqual([`${JOB1}@0`]);
  });

  it('refuses a canonical the host rule or the trap guards refuse, and one past max_pages', () => {
    const start = given(dispatched([ROOT], { honour_canonical: true }));
    expect(requested(decide(start, fetched(ROOT, 0, [], { canonical_url: 'http://other.example/' })).emit)).toEqual([]);
    expect(requested(decide(start, fetched(ROOT, 0, [], { canonical_url: 'http://site.example/a/b/a/b/a/b' })).emit)).toEqual([]);
    const full = given(dispatched([ROOT], { max_pages: 2, honour_canonical: true }), fetched(ROOT, 0, [REF]));
    const { state, emit } = decide(full, fetched(REF, 1, [], { canonical_url: JOB1 }));
    expect(requested(emit)).toEqual([]);
    expect(emit.map((e) => e.type)).toEqual(['JobCompleted']);
    expect(state.counters.duplicates).toBe(1);
  });

  it('reads an event without the field (written before it) as no duplicate', () => {
    const start = given(dispatched([ROOT], { honour_canonical: true }));
    const { state } = decide(start, fetched(ROOT, 0, [JOB1]));
    expect(state.counters.duplicates ?? 0).toBe(0);
  });
});
