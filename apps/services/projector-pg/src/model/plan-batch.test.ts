import { describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { InMemoryReadModel } from './in-memory-model.ts';
import { planBatch } from './plan-batch.ts';
import type { ProjectableEvent } from './projectable-event.ts';
import { decoded, prng, syntheticCrawl } from '@trawl/streams/testing';

const JOB = samples.JobDispatched.job_id;
const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const empty = { jobs: new Map(), loggedEventIds: new Set<string>(), pages: new Map(), items: new Map() };

function model(events: readonly ProjectableEvent[], batchSizes: number[] = [events.length]): InMemoryReadModel {
  const m = new InMemoryReadModel();
  let i = 0;
  let b = 0;
  while (i < events.length) {
    const n = Math.max(1, batchSizes[b++ % batchSizes.length]!);
    m.apply(events.slice(i, i + n));
    i += n;
  }
  return m;
}

function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const r = prng(seed);
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const withoutSeq = (m: InMemoryReadModel) => ({
  jobs: [...m.jobs.values()].sort((a, b) => a.job_id.localeCompare(b.job_id)),
  pages: [...m.pages.values()].sort((a, b) => (a.job_id + a.fetch_id).localeCompare(b.job_id + b.fetch_id)),
  items: [...m.items.values()].sort((a, b) => (a.job_id + a.item_key).localeCompare(b.job_id + b.item_key)),
  log: m.log.map(({ seq: _seq, ...rest }) => rest).sort((a, b) => a.event_id.localeCompare(b.event_id)),
  cache: [...m.cache.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
});

describe('planBatch', () => {
  const events = syntheticCrawl({ jobs: 14, pagesPerJob: 25, seed: 3 }).map(decoded);

  it('ends on the same rows whatever the order and batching of the events', () => {
    const reference = withoutSeq(model(events));
    for (const seed of [1, 2, 3]) {
      expect(withoutSeq(model(shuffled(events, seed), [1, 7, 50, 3]))).toEqual(reference);
    }
  });

  it('changes nothing when events are delivered again', () => {
    const once = model(events);
    const twice = model([...events, ...shuffled(events, 9)], [40]);
    expect(withoutSeq(twice)).toEqual(withoutSeq(once));
    expect(twice.log).toHaveLength(once.log.length);
  });

  it('numbers each job log 1..n without gaps', () => {
    const m = model(shuffled(events, 5), [13]);
    const byJob = new Map<string, number[]>();
    for (const l of m.log) byJob.set(l.job_id, [...(byJob.get(l.job_id) ?? []), l.seq]);
    for (const [job, seqs] of byJob) {
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(m.jobs.get(job)!.log_seq).toBe(seqs.length);
    }
  });

  it('counts a fetch once when a worker fetched it again, and a success beats a failure', () => {
    const failed: ProjectableEvent = { name: 'PageFailed', value: { ...samples.PageFailed, job_id: JOB, fetch_id: 'f1', event_id: 'e1', occurred_at: t(1) } };
    const ok1: ProjectableEvent = { name: 'PageFetched', value: { ...samples.PageFetched, job_id: JOB, fetch_id: 'f1', event_id: 'e2', occurred_at: t(2), bytes: 100 } };
    const ok2: ProjectableEvent = { name: 'PageFetched', value: { ...samples.PageFetched, job_id: JOB, fetch_id: 'f1', event_id: 'e3', occurred_at: t(3), bytes: 300 } };
    for (const order of [[failed, ok1, ok2], [ok2, failed, ok1], [ok1, ok2, failed]]) {
      const m = model(order, [1]);
      const job = m.jobs.get(JOB)!;
      expect({ fetched: job.pages_fetched, failed: job.pages_failed, bytes: job.bytes, urls: job.urls_seen }).toEqual({ fetched: 1, failed: 0, bytes: 300, urls: 1 });
      expect(m.pages.size).toBe(1);
      expect([...m.pages.values()][0]!.event_id).toBe('e3');
      expect(m.log).toHaveLength(3);
    }
  });

  it("keeps the status view's counters on the job row: blocked pages by the fetch's standing row, duplicates and replaced sessions by log line, each once", () => {
    const page = (fetch: string, id: string, s: number, extra: Partial<typeof samples.PageFetched> = {}): ProjectableEvent => ({ name: 'PageFetched', value: { ...samples.PageFetched, job_id: JOB, fetch_id: fetch, event_id: id, occurred_at: t(s), canonical_url: null, notes: [], ...extra } });
    const blocked = (fetch: string, id: string, s: number): ProjectableEvent => ({ name: 'PageFailed', value: { ...samples.PageFailed, job_id: JOB, fetch_id: fetch, event_id: id, occurred_at: t(s), error_code: 'TRAWL_BLOCKED' } });
    const events = [
      blocked('f1', 'b1', 1),
      blocked('f2', 'b2', 2),
      page('f2', 'p2', 3), // f2 got past the block on a fresh session: not blocked in the end
      page('f3', 'p3', 4, { canonical_url: 'https://a.example/p', notes: ['session retired and replaced: session 1 met a block (TRAWL_BLOCKED)', 'proxy 10.0.0.1:3128 benched for 60 s'] }),
      page('f4', 'p4', 5, { notes: ['session retired and replaced: session 0 met a block (TRAWL_BLOCKED)', 'session retired and replaced: session 2 met a block (TRAWL_BLOCKED)'] }),
      { name: 'PageFailed', value: { ...samples.PageFailed, job_id: JOB, fetch_id: 'f5', event_id: 'x5', occurred_at: t(6), error_code: 'TRAWL_TIMEOUT' } } as ProjectableEvent,
    ];
    const expected = { pages_blocked: 1, duplicates: 1, sessions_replaced: 3 };
    for (const seed of [1, 2, 3]) {
      const m = model([...shuffled(events, seed), ...shuffled(events, seed + 10)], [1, 2]);
      expect(m.jobs.get(JOB)).toMatchObject(expected);
    }
  });

  it('derives the status from the facts: pending, running, then the end', () => {
    const requested: ProjectableEvent = { name: 'CrawlRequested', value: { ...samples.CrawlRequested, job_id: JOB, occurred_at: t(0) } };
    const dispatched: ProjectableEvent = { name: 'JobDispatched', value: { ...samples.JobDispatched, occurred_at: t(1) } };
    const completed: ProjectableEvent = { name: 'JobCompleted', value: { ...samples.JobCompleted, job_id: JOB, outcome: 'finished', occurred_at: t(9) } };
    const failed: ProjectableEvent = { name: 'JobFailed', value: { ...samples.JobFailed, job_id: JOB, occurred_at: t(8) } };
    const cancelled: ProjectableEvent = { name: 'JobCancelled', value: { ...samples.JobCancelled, job_id: JOB, occurred_at: t(5) } };
    const page: ProjectableEvent = { name: 'PageFetched', value: { ...samples.PageFetched, job_id: JOB, occurred_at: t(3) } };

    expect(model([requested]).jobs.get(JOB)!.status).toBe('pending');
    expect(model([requested, dispatched]).jobs.get(JOB)!.status).toBe('running');
    expect(model([page]).jobs.get(JOB)!.status).toBe('running');
    const done = model([completed, page, dispatched, requested]).jobs.get(JOB)!;
    expect(done).toMatchObject({ status: 'finished', finished_at: t(9), requested_at: t(0), dispatched_at: t(1), first_page_at: t(3), user_id: samples.CrawlRequested.user_id });
    expect(model([cancelled]).jobs.get(JOB)!.status).toBe('cancelled');
    expect(model([cancelled, completed]).jobs.get(JOB)!.status).toBe('finished');
    expect(model([completed, failed]).jobs.get(JOB)!).toMatchObject({ status: 'failed', error_code: samples.JobFailed.error_code, finished_at: t(8) });
  });

  it('takes the crawled start URLs and spec from the latest dispatch attempt', () => {
    const a1: ProjectableEvent = { name: 'JobDispatched', value: { ...samples.JobDispatched, attempt: 1, search_url: 'https://a/1', occurred_at: t(1), event_id: 'd1' } };
    const a2: ProjectableEvent = { name: 'JobDispatched', value: { ...samples.JobDispatched, attempt: 2, search_url: 'https://a/2', occurred_at: t(2), event_id: 'd2' } };
    for (const order of [[a1, a2], [a2, a1]]) {
      expect(model(order, [1]).jobs.get(JOB)).toMatchObject({ attempt: 2, search_url: 'https://a/2', dispatched_at: t(1), website_id: samples.JobDispatched.spec.website_id });
    }
  });

  it('skips events already logged in the stored state', () => {
    const e: ProjectableEvent = { name: 'PageFetched', value: { ...samples.PageFetched, occurred_at: t(1) } };
    const plan = planBatch({ ...empty, loggedEventIds: new Set([e.value.event_id]) }, [e, e]);
    expect(plan).toMatchObject({ applied: 0, duplicates: 2, jobs: [], pages: [], log: [] });
  });
});

describe('planBatch: pause and resume', () => {
  const ev = <N extends 'JobDispatched' | 'JobPaused' | 'JobResumed'>(name: N, s: number, id: string): ProjectableEvent =>
    ({ name, value: { ...samples[name], event_id: id, occurred_at: t(s) } }) as ProjectableEvent;
  const dispatched = ev('JobDispatched', 0, '00000000-0000-4000-8000-00000000d000');
  const pause1 = ev('JobPaused', 10, '00000000-0000-4000-8000-00000000a001');
  const resume1 = ev('JobResumed', 20, '00000000-0000-4000-8000-00000000b001');
  const pause2 = ev('JobPaused', 30, '00000000-0000-4000-8000-00000000a002');

  it('shows paused while the last pause is later than the last resume, in whatever order they are read', () => {
    for (let seed = 1; seed <= 20; seed++) {
      expect(model(shuffled([dispatched, pause1, resume1], seed), [1]).jobs.get(JOB)!.status).toBe('running');
      expect(model(shuffled([dispatched, pause1, resume1, pause2], seed), [1, 2]).jobs.get(JOB)!.status).toBe('paused');
    }
    const m = model([dispatched, pause1, resume1, pause2]);
    expect(m.log.map((l) => l.msg)).toEqual(expect.arrayContaining([expect.stringMatching(/^paused/), expect.stringMatching(/^resumed/)]));
  });
});
