/**
 * The HTTP cache read model, given → when → then on the pure model (the same planner the live
 * projector and the replay verification run): which pages become entries, which entry stands, and
 * that one user's pages never make another user's entry.
 */
import { describe, expect, it } from 'vitest';
import { samples, type CacheReuse, type EventMap } from '@trawl/schemas';
import { InMemoryReadModel } from './in-memory-model.ts';
import type { ProjectableEvent } from './projectable-event.ts';
import { cacheKey, isCacheable } from './cache-row.ts';
import { pageFromFetched } from './page-row.ts';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const HASH = (n: number) => String(n).repeat(64).slice(0, 64);
let ids = 0;
const id = () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`;

function dispatched(job: string, user: string | null): ProjectableEvent {
  return { name: 'JobDispatched', value: { ...samples.JobDispatched, event_id: id(), job_id: job, user_id: user, occurred_at: t(0) } };
}

function page(job: string, url: string, at: number, over: Partial<EventMap['PageFetched']> = {}): ProjectableEvent {
  return {
    name: 'PageFetched',
    value: {
      ...samples.PageFetched,
      event_id: id(),
      job_id: job,
      fetch_id: `${job}/${url}`,
      url,
      final_url: url,
      occurred_at: t(at),
      status: 200,
      render_mode: 'http',
      truncated: false,
      content_hash: HASH(at % 10),
      etag: `"v${at}"`,
      last_modified: null,
      from_cache: null,
      ...over,
    },
  };
}

function entries(events: readonly ProjectableEvent[], batch = events.length) {
  const m = new InMemoryReadModel();
  for (let i = 0; i < events.length; i += batch) m.apply(events.slice(i, i + batch));
  return m.cache;
}

const U = 'https://shop.example/p/1';

describe('the HTTP cache read model', () => {
  it('given a cacheable page of a user\'s job, holds it under the user and URL', () => {
    const cache = entries([dispatched('j1', 'alice'), page('j1', U, 5)]);
    expect([...cache.values()]).toEqual([
      expect.objectContaining({ user_id: 'alice', url: U, final_url: U, status: 200, etag: '"v5"', content_hash: HASH(5), fetched_at: t(5), job_id: 'j1' }),
    ]);
  });

  it('given two jobs of one user fetching a URL, keeps the later page, whatever order they are read in', () => {
    const events = [dispatched('j1', 'alice'), dispatched('j2', 'alice'), page('j1', U, 5), page('j2', U, 9)];
    for (const order of [events, [...events].reverse(), [events[3]!, events[0]!, events[2]!, events[1]!]]) {
      for (const batch of [1, 2, 4]) {
        const cache = entries(order, batch);
        expect(cache.size).toBe(1);
        expect(cache.get(cacheKey('alice', U))).toMatchObject({ job_id: 'j2', etag: '"v9"', fetched_at: t(9) });
      }
    }
  });

  it('given a 304 revalidation, moves the entry forward with the validators that hold now', () => {
    const cache = entries([dispatched('j1', 'alice'), dispatched('j2', 'alice'), page('j1', U, 5), page('j2', U, 8, { from_cache: 'not_modified', content_hash: HASH(5), etag: '"v5b"' })]);
    expect(cache.get(cacheKey('alice', U))).toMatchObject({ job_id: 'j2', content_hash: HASH(5), etag: '"v5b"', fetched_at: t(8) });
  });

  it('given a reuse within max_age, leaves the entry as it was (no request made it younger)', () => {
    const cache = entries([dispatched('j1', 'alice'), dispatched('j2', 'alice'), page('j1', U, 5), page('j2', U, 8, { from_cache: 'max_age', content_hash: HASH(5) })]);
    expect(cache.get(cacheKey('alice', U))).toMatchObject({ job_id: 'j1', fetched_at: t(5) });
  });

  it('given another user\'s job on the same URL, keeps the two apart', () => {
    const cache = entries([dispatched('j1', 'alice'), dispatched('j2', 'bob'), page('j1', U, 5), page('j2', U, 9)]);
    expect(cache.get(cacheKey('alice', U))).toMatchObject({ job_id: 'j1' });
    expect(cache.get(cacheKey('bob', U))).toMatchObject({ job_id: 'j2' });
  });

  it('given a job without a user (an ownerless schedule), makes no entry', () => {
    expect(entries([dispatched('j1', null), page('j1', U, 5)]).size).toBe(0);
  });

  it('given pages read before their job\'s user, makes their entries when the user arrives', () => {
    const events = [page('j1', U, 5), page('j1', `${U}0`, 6), dispatched('j1', 'alice')];
    expect(entries(events, 1).size).toBe(2);
    expect(entries(events, 2).size).toBe(2);
    expect(entries(events.slice(0, 2)).size).toBe(0);
  });

  it('given what a cache cannot serve, makes no entry: a browser render, a truncated body, no stored body, a non-2xx status', () => {
    const cases: Partial<EventMap['PageFetched']>[] = [{ render_mode: 'browser' }, { truncated: true }, { content_hash: null }, { status: 304 }, { status: 301 }];
    for (const over of cases) {
      expect(entries([dispatched('j1', 'alice'), page('j1', U, 5, over)]).size, JSON.stringify(over)).toBe(0);
    }
  });

  it('decides cacheability from the page row alone', () => {
    const row = (from_cache: CacheReuse | null) => pageFromFetched(page('j', U, 1, { from_cache }).value as EventMap['PageFetched']);
    expect([row(null), row('not_modified'), row('max_age')].map(isCacheable)).toEqual([true, true, false]);
  });
});
