import { describe, expect, it } from 'vitest';
import { decide, decideAll, type FrontierEmit, type FrontierEvent } from './decide.ts';
import { initialFrontierState, type FrontierState } from './frontier-state.ts';
import { cancelled, dispatched, fetched, JOB, paused, resumed, tick } from './test-events.ts';

function given(...events: FrontierEvent[]): FrontierState {
  return events.reduce((s, e) => decide(s, e).state, initialFrontierState(JOB));
}
const kinds = (emit: readonly FrontierEmit[]) => emit.map((e) => e.type);
const requested = (emit: readonly FrontierEmit[]) => emit.flatMap((e) => (e.type === 'FetchRequested' ? [`${e.data.url}@${e.data.depth}`] : []));

const A = 'http://site.example/';
const B = 'http://site.example/b';
const C = 'http://site.example/c';

describe('frontier decide: params', () => {
  it('fills the start URLs from the params and carries them with every fetch', () => {
    const { emit } = decide(given(), dispatched(['http://site.example/search?q={{q}}'], {}, { q: 'red shoes&x' }));
    expect(requested(emit)).toEqual(['http://site.example/search?q=red%20shoes%26x@0']);
    expect(emit[0]!.data).toMatchObject({ params: { q: 'red shoes&x' } });
  });

  it('fails the job at start when a start URL uses a param it was not given', () => {
    const { state, emit } = decide(given(), dispatched(['http://site.example/search?q={{q}}']));
    expect(emit[0]).toMatchObject({ type: 'JobFailed', data: { error_code: 'MISSING_PARAM' } });
    expect(state.status).toBe('failed');
  });
});

describe('frontier decide: pause and resume', () => {
  it('requests nothing while paused, yet counts the outcomes of fetches requested before the pause', () => {
    const s = given(dispatched([A], { max_depth: 2 }), paused());
    const d = decide(s, fetched(A, 0, [B, C]));
    expect(kinds(d.emit)).toEqual([]);
    expect(d.state.counters).toMatchObject({ pages_fetched: 1, urls_seen: 3 });
    expect(Object.keys(d.state.queued)).toHaveLength(2);
    expect(d.queued.map((q) => q.url).sort()).toEqual([B, C]);
  });

  it('requests the queue on resume, exactly what it would have requested without the pause', () => {
    const straight = decide(given(dispatched([A], { max_depth: 2 })), fetched(A, 0, [B, C]));
    const held = given(dispatched([A], { max_depth: 2 }), paused(), fetched(A, 0, [B, C]));
    const { state, emit } = decide(held, resumed());
    expect(requested(emit).sort()).toEqual(requested(straight.emit).sort());
    expect(emit.map((e) => e.data.event_id).sort()).toEqual(straight.emit.map((e) => e.data.event_id).sort());
    expect(state.paused).toBe(false);
    expect(state.queued).toEqual({});
  });

  it('is never ticked while paused, and its deadline counts from the resume', () => {
    const t0 = new Date('2026-11-21T10:00:00.000Z').getTime();
    const s = given(dispatched([A], { max_depth: 2 }), paused());
    expect(decide(s, tick(t0 + 10_000_000, 1_000)).emit).toEqual([]);
    const resumedAt = new Date(t0 + 20_000_000);
    const r = decideAll(s, [resumed(resumedAt)], { now: resumedAt.getTime() });
    expect(r.state.active_at).toBe(resumedAt.getTime());
    expect(decide(r.state, tick(resumedAt.getTime() + 999, 1_000)).emit).toEqual([]);
    expect(kinds(decide(r.state, tick(resumedAt.getTime() + 1_000, 1_000)).emit)).toEqual(['PageFailed', 'JobCompleted']);
  });

  it('never completes while it holds a queue, and completes once the resumed fetches are done', () => {
    let s = given(dispatched([A], { max_depth: 1 }), paused(), fetched(A, 0, [B]));
    expect(s.status).toBe('running');
    const r = decide(s, resumed());
    s = r.state;
    expect(requested(r.emit)).toEqual([`${B}@1`]);
    expect(kinds(decide(s, fetched(B, 1)).emit)).toEqual(['JobCompleted']);
  });

  it('starts paused when paused before its dispatch is read: the seeds wait for the resume', () => {
    const s = given(paused(), dispatched([A]));
    expect(s.status).toBe('running');
    expect(Object.keys(s.queued)).toHaveLength(1);
    expect(requested(decide(s, resumed()).emit)).toEqual([`${A}@0`]);
  });

  it('a cancel drops the queue and completes; pause and resume after the end change nothing', () => {
    const s = given(dispatched([A], { max_depth: 2 }), paused(), fetched(A, 0, [B]));
    const c = decide(s, cancelled());
    expect(kinds(c.emit)).toEqual(['JobCompleted']);
    expect(c.state.queued).toEqual({});
    expect(decide(c.state, resumed()).emit).toEqual([]);
    expect(decide(c.state, paused()).state).toEqual(c.state);
  });

  it('a resume without a pause, and a second pause, change nothing', () => {
    const s = given(dispatched([A]));
    expect(decide(s, resumed()).emit).toEqual([]);
    const p = given(dispatched([A]), paused());
    expect(decide(p, paused()).state).toEqual(p);
  });
});
