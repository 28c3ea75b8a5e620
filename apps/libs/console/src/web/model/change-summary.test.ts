import { describe, expect, it } from 'vitest';
import type { JobChanges } from '@trawl/client';
import { changeSummary, fieldsDiff } from './change-summary.ts';

const page = (url: string, fetch: string | null, prev: string | null, hash: string | null = null, prevHash: string | null = null) => ({ url, fetch_id: fetch, previous_fetch_id: prev, content_hash: hash, previous_content_hash: prevHash });
const empty = { new: [], changed: [], gone: [], unchanged: [], unknown: [] };

const answer = (over: Partial<JobChanges> = {}): JobChanges => ({
  job_id: 'job-2',
  schedule_id: 's',
  status: 'finished',
  previous_job_id: 'job-1-abcdef',
  settled: true,
  waiting_for: [],
  pages: { ...empty, counts: { new: 1, changed: 1, gone: 1, unchanged: 3, unknown: 0 }, changed: [page('https://s/a', 'f2', 'f1', 'bbbbbbbbbbbb', 'aaaaaaaaaaaa')], new: [page('https://s/d', 'f3', null)], gone: [page('https://s/c', null, 'f0')] },
  items: { new: [{ url: 'https://s/', index: 2, item_key: 'k', fields: { t: 'X' }, previous_item_key: null, previous_fields: null }], changed: [{ url: 'https://s/', index: 1, item_key: 'k2', fields: { t: 'B2', p: '1' }, previous_item_key: 'k1', previous_fields: { t: 'B', p: '1' } }], removed: [], counts: { new: 1, changed: 1, removed: 0, unchanged: 2 } },
  truncated: false,
  ...over,
});

describe('the change summary of a run', () => {
  it('given a compared run, names its previous run, counts every kind and lists the non-empty kinds', () => {
    const s = changeSummary(answer());
    expect(s.headline).toBe("Compared with the schedule's previous finished run, job-1-ab.");
    expect(s.notices).toEqual([]);
    expect(s.counts.find((c) => c.key === 'pages-unchanged')?.value).toBe(3);
    expect(s.sections.map((x) => x.key)).toEqual(['pages-changed', 'pages-new', 'pages-gone', 'items-changed', 'items-new']);
    expect(s.sections[0]!.rows).toEqual([{ url: 'https://s/a', detail: 'content aaaaaaaaaa → bbbbbbbbbb', fetchId: 'f2', jobId: 'job-2' }]);
    // A gone page shows the previous run's content.
    expect(s.sections[2]!.rows[0]).toMatchObject({ fetchId: 'f0', jobId: 'job-1-abcdef' });
    expect(s.sections[3]!.rows).toEqual([{ url: 'https://s/ #2', detail: 't: B → B2', fetchId: null, jobId: null }]);
  });

  it('says when the run is the first of its schedule, still running, unsettled or cut', () => {
    const s = changeSummary(answer({ previous_job_id: null, status: 'running', settled: false, waiting_for: ['r1 (started before, not ended)'], truncated: true }));
    expect(s.headline).toBe('The first finished run of its schedule: every page and item is new.');
    expect(s.notices).toHaveLength(3);
    expect(s.notices[0]).toContain('r1 (started before, not ended)');
  });

  it('writes a field diff with absent fields as ∅, only the fields that differ', () => {
    expect(fieldsDiff({ a: '1', b: '2' }, { a: '1', c: '3' })).toBe('b: 2 → ∅; c: ∅ → 3');
    expect(fieldsDiff(null, { a: '<script>' })).toBe('a: ∅ → <script>');
  });
});
