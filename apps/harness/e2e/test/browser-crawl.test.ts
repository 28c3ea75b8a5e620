/**
 * A JavaScript-only page through the whole pipeline: the website requires the browser, so the
 * worker renders it in the system Chromium and extracts the items the page's script inserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createJobBoard, JOB_BOARD_SPEC, serve, type RunningServer } from '@trawl/demo-site';
import type { ItemExtracted, PageFetched } from '@trawl/schemas';
import { crawlSpec } from '@trawl/store';
import { Pipeline } from '../src/pipeline.ts';

let board: RunningServer;
let pipeline: Pipeline;

beforeAll(async () => {
  board = await serve(createJobBoard(), { host: '127.0.0.1', port: 0 });
  pipeline = await Pipeline.start();
  pipeline.spawn('frontier');
  pipeline.spawn('worker');
});
afterAll(async () => {
  await pipeline?.stop();
  await board?.close();
});

describe('browser crawl', () => {
  it('renders a JavaScript-only page in Chromium and extracts its items', async () => {
    const jobId = randomUUID();
    const url = `${board.origin}/js/jobs`;
    await pipeline.producer.emit(
      'JobDispatched',
      {
        job_id: jobId,
        user_id: 'e2e',
        target_id: null,
        schedule_id: null,
        search_url: url,
        start_urls: [url],
        keywords: [],
        location: null,
        spec: { ...crawlSpec(null, { depth: 0, max_pages: 1 }), ...JOB_BOARD_SPEC, requires_browser: true },
        attempt: 1,
        params: {},
      },
      { topic: pipeline.topics.jobs },
    );
    const events = await pipeline.waitFor(
      (ev) => ev.some((e) => e.event.name === 'JobCompleted' && (e.event.value as { job_id: string }).job_id === jobId),
      120_000,
      'the browser job to complete',
    );
    const page = events.find((e) => e.event.name === 'PageFetched')!.event.value as PageFetched;
    expect(page.render_mode).toBe('browser');
    expect(page.item_count).toBe(10);
    const items = events.filter((e) => e.event.name === 'ItemExtracted').map((e) => e.event.value as ItemExtracted);
    expect(items).toHaveLength(10);
    expect(items.every((i) => i.fields.title && i.fields.company)).toBe(true);
  }, 150_000);
});
