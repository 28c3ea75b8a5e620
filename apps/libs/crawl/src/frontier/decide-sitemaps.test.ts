import { describe, expect, it } from 'vitest';
import { decide, type FrontierEmit, type FrontierEvent } from './decide.ts';
import { initialFrontierState, type FrontierState } from './frontier-state.ts';
import { dispatched, fetched, JOB, paused, resumed } from './test-events.ts';

function given(...events: FrontierEvent[]): FrontierState {
  return events.reduce((s, e) => decide(s, e).state, initialFrontierState(JOB));
}
const requested = (emit: readonly FrontierEmit[]) => emit.flatMap((e) => (e.type === 'FetchRequested' ? [`${e.data.url}@${e.data.depth}`] : []));

const A = 'http://site.example/';
const S = (n: number) => `http://site.example/s/${n}`;

describe('frontier decide: sitemap URLs (PageFetched.sitemap_urls)', () => {
  it('`include`: requested after the links, at depth 1 whatever max_depth, deduplicated with the links and the seeds', () => {
    const { state, emit } = decide(
      given(dispatched([A], { max_depth: 0, sitemap: 'include' })),
      fetched(A, 0, ['http://site.example/a'], { sitemap_urls: [S(1), 'http://site.example/a', A, S(2), S(1)] }),
    );
    // max_depth 0 follows no link; the sitemap URLs are the site's own list of its pages.
    expect(requested(emit)).toEqual([`${S(1)}@1`, 'http://site.example/a@1', `${S(2)}@1`]);
    expect(state.counters.sitemap_urls).toBe(3);
    expect(state.counters.urls_seen).toBe(4);
  });

  it('`include` with max_depth 1: links and sitemap URLs both, each once', () => {
    const { emit } = decide(given(dispatched([A], { max_depth: 1 })), fetched(A, 0, [S(1), 'http://site.example/a'], { sitemap_urls: [S(1), S(2)] }));
    expect(requested(emit)).toEqual([`${S(1)}@1`, 'http://site.example/a@1', `${S(2)}@1`]);
  });

  it('`only`: the sitemap URLs and nothing the pages link to, next page included', () => {
    const start = given(dispatched([A], { max_depth: 3, sitemap: 'only' }));
    const root = decide(start, fetched(A, 0, ['http://site.example/a'], { next_page: 'http://site.example/?page=2', sitemap_urls: [S(1)] }));
    expect(requested(root.emit)).toEqual([`${S(1)}@1`]);
    const child = decide(root.state, fetched(S(1), 1, ['http://site.example/b']));
    expect(requested(child.emit)).toEqual([]);
    expect(child.emit.map((e) => e.type)).toEqual(['JobCompleted']);
  });

  it('`skip`: sitemap URLs in an event are ignored', () => {
    const { emit } = decide(given(dispatched([A], { sitemap: 'skip' })), fetched(A, 0, [], { sitemap_urls: [S(1)] }));
    expect(requested(emit)).toEqual([]);
  });

  it('off-host and trap URLs are refused as links are', () => {
    const { emit } = decide(given(dispatched([A])), fetched(A, 0, [], { sitemap_urls: ['http://other.example/x', 'http://10.0.0.1/x', 'http://site.example/a/b/a/b/a/b', S(1)] }));
    expect(requested(emit)).toEqual([`${S(1)}@1`]);
  });

  it('bounded by max_pages and by the per-job sitemap limit, over every root of the job', () => {
    const B = 'http://other.example/';
    const start = given(dispatched([A, B], { max_pages: 100, allowed_hosts: ['other.example'] }));
    const first = decide(start, fetched(A, 0, [], { sitemap_urls: [S(1), S(2), S(3)] }), { sitemapMaxUrls: 4 });
    expect(requested(first.emit)).toEqual([`${S(1)}@1`, `${S(2)}@1`, `${S(3)}@1`]);
    const second = decide(first.state, fetched(B, 0, [], { sitemap_urls: ['http://other.example/1', 'http://other.example/2'] }), { sitemapMaxUrls: 4 });
    expect(requested(second.emit)).toEqual(['http://other.example/1@1']);
    expect(second.state.counters.sitemap_urls).toBe(4);

    const small = decide(given(dispatched([A], { max_pages: 3 })), fetched(A, 0, ['http://site.example/a'], { sitemap_urls: [S(1), S(2), S(3)] }));
    expect(requested(small.emit)).toEqual(['http://site.example/a@1', `${S(1)}@1`]);
  });

  it('a paused job queues them like links, and requests them on resume', () => {
    const start = given(dispatched([A]), paused());
    const d = decide(start, fetched(A, 0, [], { sitemap_urls: [S(1)] }));
    expect(requested(d.emit)).toEqual([]);
    expect(d.queued.map((q) => q.url)).toEqual([S(1)]);
    expect(requested(decide(d.state, resumed()).emit)).toEqual([`${S(1)}@1`]);
  });

  it('reads a state stored before sitemaps (no sitemap_urls counter) as none taken', () => {
    const old = given(dispatched([A]));
    const { sitemap_urls: _, ...counters } = old.counters;
    const { state, emit } = decide({ ...old, counters }, fetched(A, 0, [], { sitemap_urls: [S(1), S(2)] }), { sitemapMaxUrls: 1 });
    expect(requested(emit)).toEqual([`${S(1)}@1`]);
    expect(state.counters.sitemap_urls).toBe(1);
  });
});
