import { describe, expect, it } from 'vitest';
import { JobProgress } from './job-progress.ts';

const status = (s: string, fetched: number, failed = 0) => ({ status: s, start_urls: ['https://a.example/'], counters: { pages_fetched: fetched, pages_failed: failed, items_extracted: 0, bytes: 0 } });
const page = (id: string, url: string, depth: number, links: string[] = [], items = 0) => ({ fetch_id: id, url, depth, links, item_count: items, bytes: 100, next_page: null });

describe('job progress from the live feed', () => {
  it('estimates the total from discovered URLs and reaches 100% only when the job completes', () => {
    const p = new JobProgress({ maxDepth: 1 });
    p.applyStatus(status('running', 0));
    p.applyEvent('PageFetched', page('f1', 'https://a.example/', 0, ['https://a.example/1', 'https://a.example/2', 'https://a.example/3']));
    expect(p.snapshot()).toMatchObject({ fetched: 1, total: 4, percent: 25, estimated: true });
    // Links of a page at the depth limit are not followed: they do not grow the total.
    p.applyEvent('PageFetched', page('f2', 'https://a.example/1', 1, ['https://a.example/deeper']));
    p.applyEvent('PageFailed', { fetch_id: 'f3', url: 'https://a.example/2' });
    p.applyEvent('PageFetched', page('f4', 'https://a.example/3', 1, [], 2));
    expect(p.snapshot()).toMatchObject({ fetched: 3, failed: 1, items: 2, total: 4, percent: 99 });
    p.applyEvent('JobCompleted', { outcome: 'finished', pages_fetched: 3, pages_failed: 1, items_extracted: 2 });
    expect(p.snapshot()).toMatchObject({ status: 'finished', percent: 100, total: 4, estimated: false });
  });

  it('counts a redelivered event once', () => {
    const p = new JobProgress();
    expect(p.applyEvent('PageFetched', page('f1', 'https://a.example/', 0))).toBe(true);
    expect(p.applyEvent('PageFetched', page('f1', 'https://a.example/', 0))).toBe(false);
    expect(p.snapshot()).toMatchObject({ fetched: 1, liveEvents: 1 });
  });

  it('adds live events to the status read when the page opened, and never goes back', () => {
    const p = new JobProgress();
    p.applyStatus(status('running', 10));
    p.applyEvent('PageFetched', page('new', 'https://a.example/x', 1));
    expect(p.snapshot().fetched).toBe(11);
    p.applyStatus(status('running', 9)); // a lagging read model
    expect(p.snapshot().fetched).toBe(11);
    p.applyStatus(status('running', 15));
    expect(p.snapshot().fetched).toBe(15);
  });

  it('caps the estimate at max_pages and shows a cancellation until the frontier confirms it', () => {
    const p = new JobProgress({ maxPages: 2 });
    p.applyEvent('PageFetched', page('f1', 'https://a.example/', 0, ['https://a.example/1', 'https://a.example/2', 'https://a.example/3']));
    expect(p.snapshot()).toMatchObject({ total: 2, percent: 50 });
    p.applyEvent('JobCancelled', {});
    expect(p.snapshot().status).toBe('cancelling');
    p.applyEvent('JobCompleted', { outcome: 'cancelled', pages_fetched: 1, pages_failed: 0, items_extracted: 0 });
    expect(p.snapshot()).toMatchObject({ status: 'cancelled', percent: 100 });
  });
});
