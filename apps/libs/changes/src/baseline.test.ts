import { describe, expect, it } from 'vitest';
import { baselineOf, namedBaseline, type ScheduleRun } from './baseline.ts';

const t = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
const run = (job_id: string, status: ScheduleRun['status'], started: number | null, ended: number | null, pages = 5, seen: number | null = status === 'finished' ? 5 : null): ScheduleRun => ({
  job_id, status, started_at: started === null ? null : t(started), ended_at: ended === null ? null : t(ended), completed_urls_seen: seen, pages_recorded: pages,
});

describe('baselineOf', () => {
  it('given finished runs, picks the latest that finished before this run started', () => {
    const runs = [run('r1', 'finished', 0, 5), run('r2', 'finished', 10, 15), run('r3', 'finished', 20, 40)];
    const b = baselineOf({ job_id: 'now', started_at: t(30) }, runs);
    expect(b).toEqual({ previous: runs[1], settled: true, waiting_for: [] });
  });

  it('skips failed and cancelled runs: the baseline is the last complete picture of the site', () => {
    const runs = [run('r1', 'finished', 0, 5), run('r2', 'failed', 10, 12), run('r3', 'cancelled', 20, 21)];
    expect(baselineOf({ job_id: 'now', started_at: t(30) }, runs).previous?.job_id).toBe('r1');
  });

  it('has none for the first run of a schedule', () => {
    expect(baselineOf({ job_id: 'now', started_at: t(30) }, [run('now', 'running', 30, null)])).toEqual({ previous: null, settled: true, waiting_for: [] });
  });

  it('is unsettled while a run started before this one has not ended in the read model (its end may not be projected yet)', () => {
    const b = baselineOf({ job_id: 'now', started_at: t(30) }, [run('r1', 'finished', 0, 5), run('r2', 'running', 10, null)]);
    expect(b.previous?.job_id).toBe('r1');
    expect(b.settled).toBe(false);
    expect(b.waiting_for).toEqual(['r2 (started before, not ended)']);
  });

  it('ignores runs started after this one (overlap allow): they can never become its baseline', () => {
    const b = baselineOf({ job_id: 'now', started_at: t(30) }, [run('r1', 'finished', 0, 5), run('later', 'running', 31, null), run('later2', 'finished', 32, 33)]);
    expect(b).toMatchObject({ previous: { job_id: 'r1' }, settled: true });
  });

  it('is unsettled until every page of the baseline is projected', () => {
    const b = baselineOf({ job_id: 'now', started_at: t(30) }, [run('r1', 'finished', 0, 5, 3, 5)]);
    expect(b).toMatchObject({ previous: { job_id: 'r1' }, settled: false, waiting_for: ['r1 (3 of 5 pages projected)'] });
  });

  it('is unsettled while the run itself has not started in the read model', () => {
    expect(baselineOf({ job_id: 'now', started_at: null }, [run('r1', 'finished', 0, 5)]).settled).toBe(false);
  });

  it('breaks a tie of end times by start time, then job id, so every reader picks the same', () => {
    const runs = [run('b', 'finished', 1, 5), run('a', 'finished', 2, 5), run('c', 'finished', 2, 5)];
    expect(baselineOf({ job_id: 'now', started_at: t(9) }, runs).previous?.job_id).toBe('c');
    expect(baselineOf({ job_id: 'now', started_at: t(9) }, [...runs].reverse()).previous?.job_id).toBe('c');
  });
});

describe('namedBaseline (`against`, a re-extraction\'s source)', () => {
  it('takes the named run, settled once it ended with its pages projected', () => {
    expect(namedBaseline(run('r1', 'finished', 0, 5))).toEqual({ previous: run('r1', 'finished', 0, 5), settled: true, waiting_for: [] });
    expect(namedBaseline(run('r1', 'cancelled', 0, 5)).settled).toBe(true);
  });

  it('is unsettled while the run goes on or its pages are not all projected', () => {
    expect(namedBaseline(run('r1', 'running', 0, null)).waiting_for).toEqual(['r1 (not ended)']);
    expect(namedBaseline(run('r1', 'finished', 0, 5, 3, 5)).waiting_for).toEqual(['r1 (3 of 5 pages projected)']);
  });
});
