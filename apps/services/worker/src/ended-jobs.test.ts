import { describe, expect, it } from 'vitest';
import { EndedJobs } from './ended-jobs.ts';

describe('ended jobs', () => {
  it('remembers ended jobs so their queued fetches are skipped', () => {
    const ended = new EndedJobs();
    ended.add('job-1');
    expect(ended.has('job-1')).toBe(true);
    expect(ended.has('job-2')).toBe(false);
  });

  it('stays bounded: the oldest ids are forgotten first', () => {
    const ended = new EndedJobs(3);
    for (const id of ['a', 'b', 'c', 'd']) ended.add(id);
    expect(ended.size).toBe(3);
    expect(ended.has('a')).toBe(false);
    expect([...ended]).toEqual(['b', 'c', 'd']);
  });
});
