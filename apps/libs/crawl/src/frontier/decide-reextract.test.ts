import { describe, expect, it } from 'vitest';
import { decide, type FrontierEmit, type FrontierEvent, type ReextractSeed } from './decide.ts';
import { initialFrontierState, type FrontierState } from './frontier-state.ts';
import { dispatched, failed, fetched, JOB, paused, resumed } from './test-events.ts';

const SOURCE = '0c5e1f7a-2b3d-5e4f-8a9b-1c2d3e4f5a6b';
const ROOT = 'http://site.example/';
const A = 'http://site.example/a';
const B = 'http://site.example/b';

function reextraction(seeds: readonly ReextractSeed[] | undefined, spec: Parameters<typeof dispatched>[1] = {}): FrontierEvent {
  const e = dispatched([ROOT], { max_depth: 3, reextract_of: SOURCE, ...spec });
  if (e.type !== 'JobDispatched') throw new Error('a dispatch');
  return seeds === undefined ? e : { ...e, seeds };
}
function given(...events: FrontierEvent[]): FrontierState {
  return events.reduce((s, e) => decide(s, e).state, initialFrontierState(JOB));
}
const requested = (emit: readonly FrontierEmit[]) => emit.flatMap((e) => (e.type === 'FetchRequested' ? [`${e.data.url}@${e.data.depth}`] : []));

describe('frontier decide: a re-extraction (CrawlSpec.reextract_of)', () => {
  it("requests the source job's pages at their depths instead of the start URLs", () => {
    const { state, emit } = decide(initialFrontierState(JOB), reextraction([{ url: ROOT, depth: 0 }, { url: A, depth: 1 }, { url: B, depth: 2 }]));
    expect(requested(emit)).toEqual([`${ROOT}@0`, `${A}@1`, `${B}@2`]);
    expect(state.status).toBe('running');
    expect(state.counters.urls_seen).toBe(3);
  });

  it('follows no link, next page, sitemap URL or canonical page, and completes when its pages are done', () => {
    const start = given(reextraction([{ url: ROOT, depth: 0 }, { url: A, depth: 1 }]));
    const root = decide(start, fetched(ROOT, 0, [B, 'http://site.example/c'], { next_page: 'http://site.example/?page=2', sitemap_urls: ['http://site.example/d'], item_count: 2 }));
    expect(requested(root.emit)).toEqual([]);
    const last = decide(root.state, fetched(A, 1, [], { canonical_url: B, item_count: 1 }));
    expect(requested(last.emit)).toEqual([]);
    expect(last.emit.map((e) => e.type)).toEqual(['JobCompleted']);
    expect(last.state.counters).toMatchObject({ pages_fetched: 2, items_extracted: 3, urls_seen: 2, duplicates: 1 });
  });

  it('counts a page that could not be read again as failed and still completes', () => {
    const start = given(reextraction([{ url: ROOT, depth: 0 }, { url: A, depth: 1 }]), fetched(ROOT, 0));
    const { emit, state } = decide(start, failed(A, 1));
    expect(emit.map((e) => e.type)).toEqual(['JobCompleted']);
    expect(state.counters).toMatchObject({ pages_fetched: 1, pages_failed: 1 });
  });

  it('fails NOTHING_TO_REEXTRACT without seeds, and keeps within max_pages and the trap rules', () => {
    for (const seeds of [undefined, []]) {
      const { emit } = decide(initialFrontierState(JOB), reextraction(seeds));
      expect(emit.map((e) => (e.type === 'JobFailed' ? e.data.error_code : e.type))).toEqual(['NOTHING_TO_REEXTRACT']);
    }
    const bounded = decide(initialFrontierState(JOB), reextraction([{ url: ROOT, depth: 0 }, { url: A, depth: 1 }, { url: B, depth: 1 }, { url: 'http://site.example/a/b/a/b/a/b', depth: 1 }], { max_pages: 2 }));
    expect(requested(bounded.emit)).toEqual([`${ROOT}@0`, `${A}@1`]);
  });

  it('holds its pages while paused and requests them on resume', () => {
    const held = given(paused(), reextraction([{ url: ROOT, depth: 0 }]));
    expect(held.counters.urls_seen).toBe(1);
    expect(requested(decide(held, resumed()).emit)).toEqual([`${ROOT}@0`]);
  });

  it('ignores seeds on an ordinary crawl', () => {
    const e = dispatched([ROOT], { max_depth: 1 });
    if (e.type !== 'JobDispatched') throw new Error('a dispatch');
    expect(requested(decide(initialFrontierState(JOB), { ...e, seeds: [{ url: A, depth: 1 }] }).emit)).toEqual([`${ROOT}@0`]);
  });
});
