import { describe, expect, it } from 'vitest';
import type { JobProgress } from '../data/jobs.ts';
import type { LogRow } from '../data/job-log.ts';
import { JobLogHub, type FollowerStep, type JobLogFollower } from './job-log-poller.ts';

/** A job's log held in memory, appended to the way projector-pg commits: rows and status together. */
class MemoryLog {
  rows: LogRow[] = [];
  status: JobProgress['status'] | undefined = 'running';
  progressReads = 0;
  rowReads = 0;

  append(n: number, status?: JobProgress['status']): void {
    for (let i = 0; i < n; i++) {
      const seq = this.rows.length + 1;
      this.rows.push({ seq, ts: new Date(0), level: 'info', msg: `line ${seq}`, event: null, event_id: null, data: null });
    }
    if (status) this.status = status;
  }

  source() {
    return {
      progress: async (_job: string): Promise<JobProgress | undefined> => {
        this.progressReads++;
        if (!this.status) return undefined;
        return { status: this.status, log_seq: this.rows.length, pages_fetched: 0, pages_failed: 0, items_extracted: 0, error: null };
      },
      rowsAfter: async (_job: string, after: number, limit: number): Promise<LogRow[]> => {
        this.rowReads++;
        return this.rows.filter((r) => r.seq > after).slice(0, limit);
      },
    };
  }
}

const terminal = (s: string) => ['finished', 'failed', 'cancelled'].includes(s);

/** Drains a follower to its end, optionally pausing (a slow client) between steps. */
async function drain(f: JobLogFollower, pauseMs = 0): Promise<{ seqs: number[]; end: FollowerStep | undefined }> {
  const seqs: number[] = [];
  const signal = new AbortController().signal;
  for (;;) {
    const step = await f.next(50, signal);
    if (step.kind === 'rows') seqs.push(...step.rows.map((r) => r.seq));
    if (step.kind === 'end') return { seqs, end: step };
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('job log poller', () => {
  it('gives every follower every line once, in order, then the end — whatever it resumed from', async () => {
    const log = new MemoryLog();
    log.append(30);
    const hub = new JobLogHub(log.source(), { pollMs: 5, batch: 7, isTerminal: terminal });
    const followers = [0, 0, 10, 29, 30, 45].map((after) => hub.follow('job', after));
    const done = Promise.all(followers.map((f) => drain(f)));
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 7));
      log.append(3);
    }
    log.append(2, 'finished');
    const results = await done;
    expect(results.map((r) => r.seqs)).toEqual([range(1, 50), range(1, 50), range(11, 50), range(30, 50), range(31, 50), range(46, 50)]);
    for (const r of results) expect(r.end).toMatchObject({ kind: 'end', progress: { status: 'finished', log_seq: 50 } });
    for (const f of followers) f.close();
    expect(hub.pollerCount).toBe(0);
  });

  it('polls the job once per round however many followers it has', async () => {
    const log = new MemoryLog();
    log.append(5);
    const hub = new JobLogHub(log.source(), { pollMs: 20, isTerminal: terminal });
    const followers = Array.from({ length: 50 }, () => hub.follow('job', 5));
    await new Promise((r) => setTimeout(r, 210));
    // ~11 rounds in 210 ms at 20 ms: one progress read each, not one per follower.
    expect(log.progressReads).toBeGreaterThanOrEqual(5);
    expect(log.progressReads).toBeLessThanOrEqual(15);
    log.append(3, 'finished');
    const results = await Promise.all(followers.map((f) => drain(f)));
    for (const r of results) expect(r.seqs).toEqual([6, 7, 8]);
    // One shared read of the new rows.
    expect(log.rowReads).toBe(1);
    for (const f of followers) f.close();
  });

  it('a slow follower drops what it was offered past the bound and reads it back from the log', async () => {
    const log = new MemoryLog();
    const hub = new JobLogHub(log.source(), { pollMs: 2, batch: 50, maxPending: 20, isTerminal: terminal });
    const slow = hub.follow('job', 0);
    const fast = hub.follow('job', 0);
    const both = Promise.all([drain(slow, 15), drain(fast)]);
    for (let i = 0; i < 20; i++) {
      log.append(10);
      await new Promise((r) => setTimeout(r, 3));
    }
    log.append(1, 'failed');
    const [s, f] = await both;
    expect(s.seqs).toEqual(range(1, 201));
    expect(f.seqs).toEqual(range(1, 201));
    slow.close();
    fast.close();
  });

  it('waits for a job that is not projected yet, then follows it from its first line', async () => {
    const log = new MemoryLog();
    log.status = undefined;
    const hub = new JobLogHub(log.source(), { pollMs: 5, isTerminal: terminal });
    const f = hub.follow('job', 0);
    const done = drain(f);
    await new Promise((r) => setTimeout(r, 30));
    log.append(2, 'running');
    await new Promise((r) => setTimeout(r, 20));
    log.append(1, 'cancelled');
    expect((await done).seqs).toEqual([1, 2, 3]);
    f.close();
  });

  it('goes on polling after a failed round', async () => {
    const log = new MemoryLog();
    const source = log.source();
    let failures = 2;
    const errors: unknown[] = [];
    const hub = new JobLogHub(
      { ...source, progress: async (job) => (failures-- > 0 ? Promise.reject(new Error('database restarting')) : source.progress(job)) },
      { pollMs: 5, isTerminal: terminal, onError: (err) => errors.push(err) },
    );
    log.append(4, 'finished');
    const f = hub.follow('job', 0);
    expect((await drain(f)).seqs).toEqual([1, 2, 3, 4]);
    expect(errors).toHaveLength(2);
    f.close();
  });
});
