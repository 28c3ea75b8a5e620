import { describe, expect, it } from 'vitest';
import { jobRunTime, jobRunTimesOf, type JobTimeEvent } from './job-run-time.ts';

/** Events in log order (offsets 0, 1, …), each `[event, at seconds, outcome?]`. */
const log = (...events: [string, number, string?][]): JobTimeEvent[] => events.map(([event, at, outcome], i) => ({ event, at, outcome: outcome ?? '', offset: BigInt(i) }));
const NOW = 10_000;

describe('a job run time', () => {
  it('given a run without pauses, is its time from dispatch to end', () => {
    expect(jobRunTime('j', log(['JobDispatched', 100], ['JobCompleted', 160, 'finished']), NOW)).toEqual({
      job_id: 'j', status: 'finished', started_at: 100, ended_at: 160, pauses: 0, paused_seconds: 0, active_seconds: 60,
    });
  });

  it('given pauses and resumes, leaves the paused time out', () => {
    const r = jobRunTime('j', log(['JobDispatched', 100], ['JobPaused', 110], ['JobResumed', 140], ['JobPaused', 150], ['JobResumed', 155], ['JobCompleted', 200, 'finished']), NOW);
    expect(r).toMatchObject({ status: 'finished', pauses: 2, paused_seconds: 35, active_seconds: 65 });
  });

  it('given a pause asked twice, counts it from the first', () => {
    const r = jobRunTime('j', log(['JobDispatched', 100], ['JobPaused', 110], ['JobPaused', 120], ['JobResumed', 130], ['JobCompleted', 150, 'finished']), NOW);
    expect(r).toMatchObject({ pauses: 1, paused_seconds: 20, active_seconds: 30 });
  });

  it('given a resume without a pause, changes nothing', () => {
    expect(jobRunTime('j', log(['JobDispatched', 100], ['JobResumed', 110], ['JobCompleted', 150, 'finished']), NOW)).toMatchObject({ pauses: 0, paused_seconds: 0, active_seconds: 50 });
  });

  it('given an end while paused, ends the pause with it', () => {
    expect(jobRunTime('j', log(['JobDispatched', 100], ['JobPaused', 120], ['JobCompleted', 150, 'cancelled']), NOW)).toMatchObject({
      status: 'cancelled', paused_seconds: 30, active_seconds: 20,
    });
  });

  it('given a pause read before the dispatch, counts it from the start', () => {
    expect(jobRunTime('j', log(['JobPaused', 90], ['JobDispatched', 100], ['JobResumed', 130], ['JobCompleted', 150, 'finished']), NOW)).toMatchObject({
      paused_seconds: 30, active_seconds: 20,
    });
  });

  it('given events after the end, ignores them', () => {
    expect(jobRunTime('j', log(['JobDispatched', 100], ['JobCompleted', 150, 'finished'], ['JobPaused', 160], ['JobFailed', 170]), NOW)).toMatchObject({
      status: 'finished', ended_at: 150, pauses: 0, paused_seconds: 0, active_seconds: 50,
    });
  });

  it('applies the events in log order, not in time order', () => {
    // A resume stamped before the pause but applied after it still ends it.
    const events: JobTimeEvent[] = [
      { event: 'JobDispatched', at: 100, outcome: '', offset: 3n },
      { event: 'JobResumed', at: 125, outcome: '', offset: 7n },
      { event: 'JobPaused', at: 130, outcome: '', offset: 5n },
      { event: 'JobCompleted', at: 200, outcome: 'finished', offset: 9n },
    ];
    expect(jobRunTime('j', events, NOW)).toMatchObject({ pauses: 1, paused_seconds: 0, active_seconds: 100 });
  });

  it('given a job still paused, counts its pause until now and has no active time yet', () => {
    expect(jobRunTime('j', log(['JobDispatched', 100], ['JobPaused', 110]), 200)).toEqual({
      job_id: 'j', status: 'paused', started_at: 100, ended_at: null, pauses: 1, paused_seconds: 90, active_seconds: null,
    });
    expect(jobRunTime('j', log(['JobDispatched', 100], ['JobPaused', 110], ['JobResumed', 120]), 200)).toMatchObject({ status: 'running', paused_seconds: 10 });
  });

  it('given a failed job or no dispatch yet, says so', () => {
    expect(jobRunTime('j', log(['JobDispatched', 100], ['JobFailed', 105]), NOW)).toMatchObject({ status: 'failed', active_seconds: 5 });
    expect(jobRunTime('j', log(['JobPaused', 100]), NOW)).toMatchObject({ status: 'paused', started_at: null, paused_seconds: 0, active_seconds: null });
    expect(jobRunTime('j', [], NOW)).toMatchObject({ status: 'pending', started_at: null });
  });

  it('starts a job at its first dispatch, whatever the attempts after it', () => {
    expect(jobRunTime('j', log(['JobDispatched', 120], ['JobDispatched', 100], ['JobCompleted', 150, 'finished']), NOW)).toMatchObject({ started_at: 100, active_seconds: 50 });
  });

  it('groups many jobs’ events by job', () => {
    const events = [
      { job_id: 'b', event: 'JobDispatched', at: 1, outcome: '', offset: 0n },
      { job_id: 'a', event: 'JobDispatched', at: 5, outcome: '', offset: 0n },
      { job_id: 'b', event: 'JobCompleted', at: 4, outcome: 'finished', offset: 1n },
    ];
    expect(jobRunTimesOf(events, NOW).map((r) => [r.job_id, r.status, r.active_seconds])).toEqual([['a', 'running', null], ['b', 'finished', 3]]);
  });
});
