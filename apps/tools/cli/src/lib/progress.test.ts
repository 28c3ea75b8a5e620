import { describe, expect, it } from 'vitest';
import { ProgressModel, renderBar, type FeedEventMessage } from './progress.ts';

const ev = (event: string, data: Record<string, unknown>): FeedEventMessage => ({ type: 'event', event, job_id: 'j', data });

describe('progress model', () => {
  it('estimates the total from start URLs and followable links, capped by max pages', () => {
    const m = new ProgressModel(['http://a/'], { maxDepth: 1, maxPages: 5 });
    m.apply(ev('PageFetched', { url: 'http://a/', depth: 0, links: ['http://a/1', 'http://a/2'], item_count: 3, bytes: 100 }));
    expect(m.snapshot).toMatchObject({ pagesFetched: 1, items: 3, bytes: 100, estimate: 3, done: false });
    // Depth 1 = max depth: its links are not followed, so they do not count.
    m.apply(ev('PageFetched', { url: 'http://a/1', depth: 1, links: ['http://a/9'], item_count: 0, bytes: 50 }));
    m.apply(ev('PageFailed', { url: 'http://a/2', depth: 1 }));
    expect(m.snapshot).toMatchObject({ pagesFetched: 2, pagesFailed: 1, estimate: 3 });
    m.apply(ev('JobCompleted', { outcome: 'finished' }));
    expect(m.snapshot).toMatchObject({ done: true, outcome: 'finished' });
  });

  it('takes depth and budget from JobDispatched', () => {
    const m = new ProgressModel(['http://a/'], { maxDepth: 0, maxPages: 100 });
    m.apply(ev('JobDispatched', { spec: { max_depth: 2, max_pages: 2 } }));
    m.apply(ev('PageFetched', { url: 'http://a/', depth: 0, links: ['http://a/1', 'http://a/2', 'http://a/3'] }));
    expect(m.snapshot.estimate).toBe(2);
  });

  it('takes the counts of the job status when the feed gives none (the bar does not end at 0/0)', () => {
    const m = new ProgressModel(['http://a/'], { maxDepth: 2, maxPages: 1000 });
    m.counted({ pages_fetched: 111, pages_failed: 0, items_extracted: 110, bytes: 205_824, urls_seen: 111 });
    m.finish('finished');
    expect(m.snapshot).toMatchObject({ pagesFetched: 111, items: 110, bytes: 205_824, estimate: 111, done: true });
    // Never below what the feed counted already.
    m.counted({ pages_fetched: 5, pages_failed: 0, items_extracted: 0, bytes: 0, urls_seen: 5 });
    expect(m.snapshot.pagesFetched).toBe(111);
  });

  it('counts an event written twice (the same event id, at-least-once) once', () => {
    const m = new ProgressModel(['http://a/'], { maxDepth: 0, maxPages: 5 });
    const page = ev('PageFetched', { event_id: 'e-1', url: 'http://a/', depth: 0, item_count: 2, bytes: 100 });
    m.apply(page);
    m.apply(page);
    expect(m.snapshot).toMatchObject({ pagesFetched: 1, items: 2, bytes: 100, estimate: 1 });
  });

  it('records failure', () => {
    const m = new ProgressModel(['http://a/'], { maxDepth: 1, maxPages: 5 });
    m.apply(ev('JobFailed', { reason: 'every start URL refused' }));
    expect(m.snapshot).toMatchObject({ done: true, outcome: 'failed', error: 'every start URL refused' });
  });
});

describe('progress bar', () => {
  it('renders proportionally and full when done', () => {
    const base = { pagesFetched: 5, pagesFailed: 0, items: 7, bytes: 2048, estimate: 10, done: false, outcome: null, error: null };
    expect(renderBar(base, 10)).toBe('[█████░░░░░]  50%  5/10 pages · 7 items · 2048');
    expect(renderBar({ ...base, pagesFailed: 1, done: true, outcome: 'finished' }, 10)).toBe('[██████████] 100%  6/6 pages · 1 failed · 7 items · 2048');
  });
});
