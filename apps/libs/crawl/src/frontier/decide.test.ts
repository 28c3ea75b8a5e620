import { describe, expect, it } from 'vitest';
import type { JobDispatched } from '@trawl/schemas';
import { decide, decideAll, type FrontierEmit, type FrontierEvent } from './decide.ts';
import { fetchId } from '../url/normalise.ts';
import { jobEventId } from './event-ids.ts';
import { FETCH_LOST, initialFrontierState, type FrontierState } from './frontier-state.ts';
import { cancelled, dispatched, failed, fetched, JOB, tick } from './test-events.ts';

/** Given these events happened… */
function given(...events: FrontierEvent[]): FrontierState {
  return events.reduce((s, e) => decide(s, e).state, initialFrontierState(JOB));
}
const kinds = (emit: readonly FrontierEmit[]) => emit.map((e) => e.type);
const requested = (emit: readonly FrontierEmit[]) => emit.flatMap((e) => (e.type === 'FetchRequested' ? [`${e.data.url}@${e.data.depth}`] : []));

const A = 'http://site.example/';

describe('frontier decide: JobDispatched', () => {
  it('requests each seed once, normalised, at depth 0', () => {
    const { state, emit } = decide(given(), dispatched([A, 'HTTP://site.example:80/#x', 'http://site.example/b?utm_source=z']));
    expect(requested(emit)).toEqual(['http://site.example/@0', 'http://site.example/b@0']);
    expect(state.status).toBe('running');
    expect(Object.keys(state.outstanding)).toHaveLength(2);
    expect(state.counters.urls_seen).toBe(2);
    const first = emit[0]!.data as { referrer: unknown; causation_id: unknown; job_id: string };
    expect(first).toMatchObject({ referrer: null, job_id: JOB });
  });

  it('keeps the job\'s user, whose HTTP cache the service looks its requests up in, and emits no cache entry itself', () => {
    const event = dispatched([A]) as { type: 'JobDispatched'; data: JobDispatched };
    const withUser: FrontierEvent = { type: 'JobDispatched', data: { ...event.data, user_id: 'alice' } };
    const { state, emit } = decide(given(), withUser);
    expect(state.user_id).toBe('alice');
    expect(emit[0]).toMatchObject({ type: 'FetchRequested', data: { cached: null } });
    expect(decide(given(), dispatched([A])).state.user_id).toBeNull();
  });

  it("puts the job's user on each request, and on the links' requests after: the worker shares its slots by user", () => {
    const event = dispatched([A]) as { type: 'JobDispatched'; data: JobDispatched };
    const { state, emit } = decide(given(), { type: 'JobDispatched', data: { ...event.data, user_id: 'alice' } });
    expect(emit[0]).toMatchObject({ type: 'FetchRequested', data: { user_id: 'alice' } });
    const next = decide(state, fetched(A, 0, ['http://site.example/next']));
    expect(next.emit.filter((e) => e.type === 'FetchRequested').map((e) => (e.data as { user_id: unknown }).user_id)).toEqual(['alice']);
    expect(decide(given(), dispatched([A])).emit[0]).toMatchObject({ data: { user_id: null } });
  });

  it('fails the job when every seed is refused', () => {
    const { state, emit } = decide(given(), dispatched(['mailto:x@y.z', 'ftp://site.example/', 'not a url']));
    expect(kinds(emit)).toEqual(['JobFailed']);
    expect(emit[0]!.data).toMatchObject({ error_code: 'ALL_SEEDS_REFUSED' });
    expect(state.status).toBe('failed');
  });

  it('fails the job at start when a pattern is not a valid regex', () => {
    const { emit } = decide(given(), dispatched([A], { include_patterns: ['(oops'] }));
    expect(emit[0]).toMatchObject({ type: 'JobFailed', data: { error_code: 'INVALID_SPEC' } });
  });

  it('ignores a redelivered dispatch', () => {
    expect(decide(given(dispatched([A])), dispatched([A])).emit).toEqual([]);
  });
});

describe('frontier decide: PageFetched', () => {
  it('requests new links that pass the rules, one hop deeper', () => {
    const { emit } = decide(
      given(dispatched([A])),
      fetched(A, 0, ['http://site.example/a', 'http://site.example/a#dup', 'http://other.example/x', 'http://site.example/a/b/a/b', A]),
    );
    expect(requested(emit)).toEqual(['http://site.example/a@1']);
  });

  it('never goes past max_depth; max_depth 0 fetches the seeds only', () => {
    const s = given(dispatched([A], { max_depth: 1 }), fetched(A, 0, ['http://site.example/a']));
    const { emit } = decide(s, fetched('http://site.example/a', 1, ['http://site.example/b']));
    expect(requested(emit)).toEqual([]);
    expect(kinds(emit)).toEqual(['JobCompleted']);
    const zero = decide(given(dispatched([A], { max_depth: 0 })), fetched(A, 0, ['http://site.example/a']));
    expect(kinds(zero.emit)).toEqual(['JobCompleted']);
  });

  it('stops requesting at max_pages, counting requested URLs', () => {
    const links = Array.from({ length: 10 }, (_, i) => `http://site.example/p${i}`);
    const { state, emit } = decide(given(dispatched([A], { max_pages: 4 })), fetched(A, 0, links));
    expect(requested(emit)).toHaveLength(3);
    expect(state.counters.urls_seen).toBe(4);
  });

  it('requests the pagination successor at the same depth, past the patterns', () => {
    const { emit } = decide(
      given(dispatched([A], { max_depth: 0, include_patterns: ['/jobs/'] })),
      fetched(A, 0, [], { next_page: 'http://site.example/?page=2' }),
    );
    expect(requested(emit)).toEqual(['http://site.example/?page=2@0']);
  });

  it('ignores a duplicate PageFetched of a fetch already done', () => {
    const page = fetched(A, 0, ['http://site.example/a']);
    const s = given(dispatched([A]), page);
    const again = decide(s, page);
    expect(again.emit).toEqual([]);
    expect(again.state.counters).toEqual(s.counters);
  });

  it('ignores a page this job never requested', () => {
    const { emit, state } = decide(given(dispatched([A])), fetched('http://site.example/never', 1));
    expect(emit).toEqual([]);
    expect(state.counters.pages_fetched).toBe(0);
  });

  it('counts pages and items', () => {
    const { state } = decide(given(dispatched([A])), fetched(A, 0, [], { item_count: 7 }));
    expect(state.counters).toMatchObject({ pages_fetched: 1, items_extracted: 7 });
  });
});

describe('frontier decide: completion', () => {
  it('is not complete while any requested fetch has no answer (workers cannot declare done too early)', () => {
    let s = given(dispatched([A]));
    let d = decide(s, fetched(A, 0, ['http://site.example/a', 'http://site.example/b']));
    expect(kinds(d.emit)).toEqual(['FetchRequested', 'FetchRequested']);
    s = d.state;
    d = decide(s, fetched('http://site.example/a', 1));
    expect(kinds(d.emit)).toEqual([]); // b is still outstanding: "everything I was given is done" is not the end
    expect(d.state.status).toBe('running');
    d = decide(d.state, failed('http://site.example/b', 1));
    expect(kinds(d.emit)).toEqual(['JobCompleted']);
    expect(d.emit[0]!.data).toMatchObject({ outcome: 'finished', pages_fetched: 2, pages_failed: 1, urls_seen: 3 });
    expect(d.state.status).toBe('completed');
  });

  it('completes once: nothing after the end emits anything', () => {
    const s = given(dispatched([A]), fetched(A, 0));
    expect(s.status).toBe('completed');
    for (const e of [fetched(A, 0), failed(A, 0), cancelled(), dispatched([A])]) expect(decide(s, e).emit).toEqual([]);
  });

  it('a failed login fails the job LOGIN_FAILED with its reason, at once, with pages still outstanding', () => {
    let s = given(dispatched([A]), fetched(A, 0, ['http://site.example/a', 'http://site.example/b']));
    const login = failed('http://site.example/a', 1) as Extract<FrontierEvent, { type: 'PageFailed' }>;
    const d = decide(s, { ...login, data: { ...login.data, error_code: 'TRAWL_LOGIN_FAILED', error_message: 'form login at http://site.example/login: the page after the login shows the failure text' } });
    expect(kinds(d.emit)).toEqual(['JobFailed']);
    expect(d.emit[0]!.data).toMatchObject({ error_code: 'LOGIN_FAILED', reason: 'form login at http://site.example/login: the page after the login shows the failure text', pages_fetched: 1, pages_failed: 1 });
    s = d.state;
    expect(s.status).toBe('failed');
    expect(decide(s, failed('http://site.example/b', 1)).emit).toEqual([]);
  });

  it('a failed seed still completes the job, with the failure counted', () => {
    const { emit } = decide(given(dispatched([A])), failed(A, 0));
    expect(emit[0]).toMatchObject({ type: 'JobCompleted', data: { pages_failed: 1, pages_fetched: 0 } });
  });
});

describe('frontier decide: the fetch deadline', () => {
  const T0 = Date.parse('2026-11-21T10:00:00.000Z'); // the test events' occurred_at
  const DEADLINE = 60_000;
  const B = 'http://site.example/b';

  /** Dispatched at T0 with seeds A and B; A answered at `answeredAt` (edge clock), B never. */
  function waitingForB(answeredAt = T0 + 10_000): FrontierState {
    const s = decide(given(), dispatched([A, B]), { now: T0 }).state;
    return decide(s, fetched(A, 0), { now: answeredAt }).state;
  }

  it('fails what a silent job still waits for with FETCH_LOST, then completes it', () => {
    const s = waitingForB();
    const { state, emit } = decide(s, tick(T0 + 10_000 + DEADLINE, DEADLINE));
    expect(kinds(emit)).toEqual(['PageFailed', 'JobCompleted']);
    expect(emit[0]!.data).toMatchObject({ url: B, depth: 0, error_code: FETCH_LOST, status: null, attempts: 0, occurred_at: new Date(T0 + 10_000 + DEADLINE) });
    expect(emit[1]!.data).toMatchObject({ outcome: 'finished', pages_fetched: 1, pages_failed: 1, urls_seen: 2, causation_id: emit[0]!.data.event_id });
    expect(state.status).toBe('completed');
    expect(state.outstanding).toEqual({});
  });

  it('counts the deadline from the last outcome, not from the request (a job that moves loses nothing)', () => {
    const s = waitingForB(T0 + DEADLINE - 1);
    expect(decide(s, tick(T0 + DEADLINE + 1, DEADLINE)).emit).toEqual([]);
    expect(decide(s, tick(T0 + 2 * DEADLINE - 2, DEADLINE)).emit).toEqual([]);
    expect(kinds(decide(s, tick(T0 + 2 * DEADLINE - 1, DEADLINE)).emit)).toEqual(['PageFailed', 'JobCompleted']);
  });

  it('emits the same events, ids and times included, when ticked again from the same state (a restart)', () => {
    const s = waitingForB();
    const a = decide(s, tick(T0 + 10_000 + DEADLINE, DEADLINE));
    const b = decide(JSON.parse(JSON.stringify(s)) as FrontierState, tick(T0 + 10 * DEADLINE, DEADLINE));
    expect(b.emit).toEqual(a.emit);
    // Its own id: not the id of the worker's PageFailed for the same fetch, should that come too.
    expect(a.emit[0]!.data.event_id).not.toBe(jobEventId({ jobId: JOB, kind: 'PageFailed', key: fetchId(JOB, B) }));
  });

  it('absorbs the real outcome that arrives after the deadline: the job completed once', () => {
    const { state } = decide(waitingForB(), tick(T0 + 10 * DEADLINE, DEADLINE));
    const late = decide(state, fetched(B, 0, ['http://site.example/c'], { item_count: 3 }), { now: T0 + 11 * DEADLINE });
    expect(late.emit).toEqual([]);
    expect(late.state.counters).toEqual(state.counters);
    expect(decide(state, tick(T0 + 20 * DEADLINE, DEADLINE)).emit).toEqual([]);
  });

  it('leaves new, finished and cancelled jobs alone', () => {
    const far = tick(T0 + 100 * DEADLINE, DEADLINE);
    expect(decide(given(), far).emit).toEqual([]);
    expect(decide(given(dispatched([A]), fetched(A, 0)), far).emit).toEqual([]);
    expect(decide(given(dispatched([A]), cancelled()), far).emit).toEqual([]);
  });

  it('counts from the event time when the edge gives no clock (deciding from the log alone)', () => {
    const s = given(dispatched([A, B]));
    expect(s.active_at).toBe(T0);
    expect(decide(s, tick(T0 + DEADLINE - 1, DEADLINE)).emit).toEqual([]);
    expect(kinds(decide(s, tick(T0 + DEADLINE, DEADLINE)).emit)).toEqual(['PageFailed', 'PageFailed', 'JobCompleted']);
  });
});

describe('frontier decide: JobCancelled', () => {
  it('drops outstanding fetches and ends the job cancelled, once; later pages are ignored', () => {
    const s = given(dispatched([A]), fetched(A, 0, ['http://site.example/a']));
    const d = decide(s, cancelled());
    expect(d.emit).toHaveLength(1);
    expect(d.emit[0]).toMatchObject({ type: 'JobCompleted', data: { outcome: 'cancelled', pages_fetched: 1 } });
    expect(d.state.outstanding).toEqual({});
    expect(decide(d.state, fetched('http://site.example/a', 1, ['http://site.example/z'])).emit).toEqual([]);
    expect(decide(d.state, cancelled()).emit).toEqual([]);
  });

  it('a job cancelled before its dispatch never starts', () => {
    const d = decide(given(), cancelled());
    expect(kinds(d.emit)).toEqual(['JobCompleted']);
    expect(decide(d.state, dispatched([A])).emit).toEqual([]);
  });
});

describe('frontier decide: determinism and storage', () => {
  it('emits identical events (ids included) when the same events are decided again after a crash', () => {
    const s = given(dispatched([A]));
    const page = fetched(A, 0, ['http://site.example/a', 'http://site.example/b']);
    expect(decide(s, page)).toEqual(decide(s, page));
    const ids = decide(s, page).emit.map((e) => e.data.event_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('does not change the state it is given', () => {
    const s = given(dispatched([A]));
    const snapshot = structuredClone(s);
    decide(s, fetched(A, 0, ['http://site.example/a']));
    expect(s).toEqual(snapshot);
  });

  it('with reuseState, decides the same while updating the given state in place', () => {
    const events = [dispatched([A]), fetched(A, 0, ['http://site.example/a']), fetched('http://site.example/a', 1)];
    let pure = initialFrontierState(JOB);
    const owned = initialFrontierState(JOB);
    let s = owned;
    for (const e of events) {
      const a = decide(pure, e);
      const b = decide(s, e, { reuseState: true });
      expect(b.emit).toEqual(a.emit);
      pure = a.state;
      s = b.state;
    }
    expect(s).toEqual(pure);
    expect(owned.seen).toBe(s.seen);
  });

  it('survives a JSON round trip (it is stored as jsonb)', () => {
    const s = given(dispatched([A]), fetched(A, 0, ['http://site.example/a', 'http://site.example/b']));
    const restored = JSON.parse(JSON.stringify(s)) as FrontierState;
    expect(restored).toEqual(s);
    const next = fetched('http://site.example/a', 1, ['http://site.example/c']);
    expect(decide(restored, next)).toEqual(decide(s, next));
  });

  it('decideAll over a batch equals deciding one by one', () => {
    const events = [dispatched([A]), fetched(A, 0, ['http://site.example/a']), fetched('http://site.example/a', 1)];
    const batch = decideAll(initialFrontierState(JOB), events);
    let s = initialFrontierState(JOB);
    const emit: FrontierEmit[] = [];
    for (const e of events) {
      const d = decide(s, e);
      s = d.state;
      emit.push(...d.emit);
    }
    expect(batch.state).toEqual(s);
    expect(batch.emit).toEqual(emit);
  });
});
