import { Registry } from 'prom-client';
import { createLogger } from '@trawl/streams';
import { describe, expect, it } from 'vitest';
import { SESSION_REPLACED_NOTE, sessionEvents } from './session-events.ts';

describe("sessions in the job's log", () => {
  it("notes each retirement for the job's next pages, a few at a time, and counts every event", async () => {
    const registry = new Registry();
    const events = sessionEvents(createLogger('test'), registry);
    const retired = (session: number) => events.onEvent({ kind: 'retired', jobId: 'j1', session, generation: 1, reason: 'TRAWL_BLOCKED' });
    retired(0);
    retired(1);
    retired(2);
    events.onEvent({ kind: 'login', jobId: 'j1', session: 0, generation: 1, reason: 'login' });
    expect(events.takeNotes('j2', 5)).toEqual([]);
    const first = events.takeNotes('j1', 2);
    expect(first).toEqual([`${SESSION_REPLACED_NOTE}: session 0 met a block (TRAWL_BLOCKED), generation 1 took its place`, `${SESSION_REPLACED_NOTE}: session 1 met a block (TRAWL_BLOCKED), generation 1 took its place`]);
    expect(events.takeNotes('j1', 5)).toHaveLength(1);
    expect(events.takeNotes('j1', 5)).toEqual([]);
    const metric = (await registry.getSingleMetric('trawl_worker_sessions_total')!.get()).values;
    expect(Object.fromEntries(metric.map((v) => [v.labels.event, v.value]))).toEqual({ retired: 3, login: 1 });
  });
});
