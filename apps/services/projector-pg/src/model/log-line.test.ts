import { describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { formatBytes, formatDuration, isLogged, logLine } from './log-line.ts';

describe('job log lines', () => {
  it('describes a fetched page with size, time and items', () => {
    const line = logLine('PageFetched', { ...samples.PageFetched, url: 'https://shop.example/p/1', final_url: 'https://shop.example/p/1', status: 200, bytes: 5222, fetch_ms: 42, item_count: 3, attempt: 1, render_mode: 'http', truncated: false });
    expect(line).toMatchObject({ level: 'info', msg: 'fetched https://shop.example/p/1 200 (5.1 KB, 42 ms, 3 items)' });
  });

  it('warns on an error status and shows redirects, browser rendering and retries', () => {
    const line = logLine('PageFetched', { ...samples.PageFetched, url: 'https://a.example/x', final_url: 'https://a.example/y', status: 404, bytes: 10, fetch_ms: 1500, item_count: 1, attempt: 2, render_mode: 'browser', truncated: true });
    expect(line.level).toBe('warn');
    expect(line.msg).toBe('fetched https://a.example/x -> https://a.example/y 404 (10 B, 1500 ms, 1 item, browser, truncated, attempt 2)');
  });

  it('warns, with its code, when the content the job would keep was refused (storage quota)', () => {
    const line = logLine('PageFetched', { ...samples.PageFetched, url: 'https://shop.example/p/2', final_url: 'https://shop.example/p/2', status: 200, bytes: 2048, fetch_ms: 7, item_count: 0, attempt: 1, render_mode: 'http', truncated: false, content_refused: 'STORAGE_QUOTA_EXCEEDED' });
    expect(line).toMatchObject({ level: 'warn', msg: 'fetched https://shop.example/p/2 200 (2.0 KB, 7 ms, 0 items, content not kept: STORAGE_QUOTA_EXCEEDED)', data: { content_refused: 'STORAGE_QUOTA_EXCEEDED' } });
    expect(logLine('PageFetched', { ...samples.PageFetched, status: 200, content_refused: null }).data).not.toHaveProperty('content_refused');
  });

  it("says the worker's notes (a proxy benched) after the page's figures, as a warning", () => {
    const note = 'proxy 203.0.114.7:3128 benched for 60 s after 3 connect errors in a row';
    const line = logLine('PageFetched', { ...samples.PageFetched, url: 'https://shop.example/p/3', final_url: 'https://shop.example/p/3', status: 200, bytes: 100, fetch_ms: 9, item_count: 1, attempt: 1, render_mode: 'http', truncated: false, notes: [note] });
    expect(line).toMatchObject({ level: 'warn', msg: `fetched https://shop.example/p/3 200 (100 B, 9 ms, 1 item); ${note}`, data: { notes: [note] } });
    expect(logLine('PageFetched', { ...samples.PageFetched, notes: [] }).data).not.toHaveProperty('notes');
  });

  it('says a duplicate by rel=canonical is one, and of which page', () => {
    const duplicate = logLine('PageFetched', { ...samples.PageFetched, url: 'https://shop.example/p/2?ref=home', final_url: 'https://shop.example/p/2?ref=home', status: 200, bytes: 2048, fetch_ms: 7, item_count: 0, attempt: 1, render_mode: 'http', truncated: false, canonical_url: 'https://shop.example/p/2' });
    expect(duplicate).toMatchObject({ level: 'info', msg: 'fetched https://shop.example/p/2?ref=home 200 (2.0 KB, 7 ms, 0 items, duplicate of https://shop.example/p/2)', data: { canonical_url: 'https://shop.example/p/2' } });
    expect(logLine('PageFetched', { ...samples.PageFetched, canonical_url: null }).data).not.toHaveProperty('canonical_url');
  });

  it('says a near-duplicate is one, and of which page', () => {
    const near = logLine('PageFetched', { ...samples.PageFetched, url: 'https://shop.example/a?print=1', final_url: 'https://shop.example/a?print=1', status: 200, bytes: 2048, fetch_ms: 7, item_count: 0, attempt: 1, render_mode: 'http', truncated: false, canonical_url: null, near_duplicate_of: 'https://shop.example/a' });
    expect(near).toMatchObject({ level: 'info', msg: 'fetched https://shop.example/a?print=1 200 (2.0 KB, 7 ms, 0 items, near-duplicate of https://shop.example/a)', data: { near_duplicate_of: 'https://shop.example/a' } });
    expect(logLine('PageFetched', { ...samples.PageFetched, near_duplicate_of: null }).data).not.toHaveProperty('near_duplicate_of');
  });

  it("says the adaptive throttle's new setting for the host, as information, with its figures in data", () => {
    const throttle = { host: 'shop.example', delay_ms: 250, concurrency: 3 };
    const line = logLine('PageFetched', { ...samples.PageFetched, url: 'https://shop.example/p/4', final_url: 'https://shop.example/p/4', status: 200, bytes: 100, fetch_ms: 9, item_count: 1, attempt: 1, render_mode: 'http', truncated: false, throttle });
    expect(line).toMatchObject({ level: 'info', msg: 'fetched https://shop.example/p/4 200 (100 B, 9 ms, 1 item, throttle on shop.example: 250 ms apart, 3 in flight)', data: { throttle } });
    expect(logLine('PageFetched', { ...samples.PageFetched, throttle: null }).data).not.toHaveProperty('throttle');
  });

  it('logs a failed page as an error with its code and attempts', () => {
    const line = logLine('PageFailed', { ...samples.PageFailed, url: 'https://a.example/z', status: null, error_code: 'TIMEOUT', error_message: 'timed out after 10 s', attempts: 4 });
    expect(line).toMatchObject({ level: 'error', msg: 'failed https://a.example/z after 4 attempts: TIMEOUT timed out after 10 s' });
  });

  it('summarises the end of a job', () => {
    const started = new Date('2026-01-01T00:00:00Z');
    const line = logLine('JobCompleted', { ...samples.JobCompleted, outcome: 'finished', pages_fetched: 12, pages_failed: 1, items_extracted: 36, urls_seen: 40, started_at: started, occurred_at: new Date(started.getTime() + 12_300) });
    expect(line).toMatchObject({ level: 'warn', msg: 'finished: 12 pages fetched, 1 failed, 36 items, 40 URLs seen in 12.3 s' });
  });

  it('gives items no line of their own: the page line counts them', () => {
    expect(isLogged('ItemExtracted')).toBe(false);
    expect(isLogged('PageFetched')).toBe(true);
  });

  it('formats sizes and durations for people', () => {
    expect([formatBytes(0), formatBytes(1023), formatBytes(1024), formatBytes(5 * 1024 * 1024)]).toEqual(['0 B', '1023 B', '1.0 KB', '5.0 MB']);
    expect([formatDuration(42), formatDuration(12_300), formatDuration(125_000)]).toEqual(['42 ms', '12.3 s', '2 min 5 s']);
  });
});
