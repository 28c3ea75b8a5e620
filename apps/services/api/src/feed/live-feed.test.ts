import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { FeedClient, type FeedSocket } from './feed-client.ts';
import type { FeedEvent } from './feed-event.ts';
import { LiveFeed } from './live-feed.ts';

function socket() {
  const sent: unknown[] = [];
  const s: FeedSocket = { readyState: 1, bufferedAmount: 0, send: (d: unknown) => void sent.push(JSON.parse(String(d))), close: () => undefined } as never;
  return { s, sent };
}

let offset = 0;
function event(name: FeedEvent['name'], value: object): FeedEvent {
  return { name, value: value as never, topic: 't', partition: 0, offset: String(offset++) };
}

describe('live feed hub', () => {
  it("delivers a user's events only to that user's clients", async () => {
    const feed = new LiveFeed({ lookupOwner: async () => null, logger: pino({ level: 'silent' }) });
    const a = socket();
    const b = socket();
    feed.add(new FeedClient('alice', { jobIds: null, names: null }, a.s, { highWaterBytes: 1e6, slowCloseMs: 1e6 }));
    feed.add(new FeedClient('bob', { jobIds: null, names: null }, b.s, { highWaterBytes: 1e6, slowCloseMs: 1e6 }));
    await feed.handle(event('CrawlRequested', { job_id: 'j1', user_id: 'alice' }));
    await feed.handle(event('PageFetched', { job_id: 'j1' }));
    expect(a.sent.map((m) => (m as { event: string }).event)).toEqual(['CrawlRequested', 'PageFetched']);
    expect(b.sent).toEqual([]);
  });

  it('looks up the owner of a job it has not seen announced, once, and keeps the order', async () => {
    let lookups = 0;
    const feed = new LiveFeed({
      lookupOwner: async (job) => {
        lookups++;
        await new Promise((r) => setTimeout(r, 10));
        return job === 'j2' ? 'alice' : null;
      },
      logger: pino({ level: 'silent' }),
    });
    const a = socket();
    feed.add(new FeedClient('alice', { jobIds: null, names: null }, a.s, { highWaterBytes: 1e6, slowCloseMs: 1e6 }));
    // streams delivers one message at a time: each handle() is awaited before the next.
    for (let i = 0; i < 3; i++) await feed.handle(event('PageFetched', { job_id: 'j2', n: i }));
    await feed.handle(event('PageFetched', { job_id: 'unknown' }));
    await feed.handle(event('PageFetched', { job_id: 'unknown' }));
    expect(a.sent.map((m) => (m as { data: { n: number } }).data.n)).toEqual([0, 1, 2]);
    expect(lookups).toBe(2); // j2 once, "unknown" once (remembered as unknown for a while)
  });

  it('stops delivering to a removed client', async () => {
    const feed = new LiveFeed({ lookupOwner: async () => 'alice', logger: pino({ level: 'silent' }) });
    const a = socket();
    const remove = feed.add(new FeedClient('alice', { jobIds: null, names: null }, a.s, { highWaterBytes: 1e6, slowCloseMs: 1e6 }));
    remove();
    await feed.handle(event('PageFetched', { job_id: 'j3' }));
    expect(a.sent).toEqual([]);
    expect(feed.clientCount).toBe(0);
  });
});
