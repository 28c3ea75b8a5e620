import { describe, expect, it } from 'vitest';
import { CLOSE_TOO_SLOW, FeedClient, type FeedSocket } from './feed-client.ts';

class FakeSocket implements FeedSocket {
  readyState = 1 as const;
  bufferedAmount = 0;
  sent: string[] = [];
  closed: [number | undefined, string | undefined] | undefined;
  send(data: unknown) {
    this.sent.push(String(data));
  }
  close(code?: number, reason?: string) {
    this.closed = [code, reason];
  }
}

function client(socket: FakeSocket, clock: { t: number }, filter = { jobIds: null, names: null }) {
  return new FeedClient('u', filter, socket as never, { highWaterBytes: 100, slowCloseMs: 1_000, now: () => clock.t });
}

describe('feed client (slow-client policy)', () => {
  it('sends while under the high-water mark', () => {
    const s = new FakeSocket();
    const c = client(s, { t: 0 });
    c.send('a');
    c.send('b');
    expect(s.sent).toEqual(['a', 'b']);
  });

  it('drops events while over the mark, then says how many were dropped before the next one', () => {
    const s = new FakeSocket();
    const c = client(s, { t: 0 });
    s.bufferedAmount = 101;
    c.send('a');
    c.send('b');
    expect(s.sent).toEqual([]);
    expect(c.droppedSinceNotice).toBe(2);
    s.bufferedAmount = 0;
    c.send('c');
    expect(s.sent).toEqual([JSON.stringify({ type: 'dropped', count: 2 }), 'c']);
  });

  it('closes a client that stays over the mark for slowCloseMs with 1013', () => {
    const s = new FakeSocket();
    const clock = { t: 0 };
    const c = client(s, clock);
    s.bufferedAmount = 1_000;
    c.send('a');
    clock.t = 999;
    c.send('b');
    expect(s.closed).toBeUndefined();
    clock.t = 1_000;
    c.send('c');
    expect(s.closed?.[0]).toBe(CLOSE_TOO_SLOW);
  });

  it('announces the hole and closes a stuck client without waiting for another event', async () => {
    const drained = new FakeSocket();
    const c = new FeedClient('u', { jobIds: null, names: null }, drained as never, { highWaterBytes: 100, slowCloseMs: 1_000, recheckMs: 5 });
    drained.bufferedAmount = 101;
    c.send('last of the burst');
    drained.bufferedAmount = 0;
    await new Promise((r) => setTimeout(r, 30));
    expect(drained.sent).toEqual([JSON.stringify({ type: 'dropped', count: 1 })]);

    const stuck = new FakeSocket();
    const clock = { t: 0 };
    const d = new FeedClient('u', { jobIds: null, names: null }, stuck as never, { highWaterBytes: 100, slowCloseMs: 1_000, recheckMs: 5, now: () => clock.t });
    stuck.bufferedAmount = 1_000;
    d.send('a');
    clock.t = 1_000;
    await new Promise((r) => setTimeout(r, 30));
    expect(stuck.closed?.[0]).toBe(CLOSE_TOO_SLOW);
  });

  it('filters by job and event name', () => {
    const c = new FeedClient('u', { jobIds: new Set(['j1']), names: new Set(['PageFetched']) }, new FakeSocket() as never, { highWaterBytes: 1, slowCloseMs: 1 });
    expect(c.wants('PageFetched', 'j1')).toBe(true);
    expect(c.wants('PageFetched', 'j2')).toBe(false);
    expect(c.wants('JobCompleted', 'j1')).toBe(false);
  });
});
