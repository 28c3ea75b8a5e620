import { describe, expect, it } from 'vitest';
import type { Schedule } from '@trawl/store';
import { planDispatch } from './dispatch-plan.ts';

const schedule: Schedule = {
  id: 'sched-1',
  owner_id: 'alice',
  target_id: null,
  request: { spider: null, start_urls: ['https://example.com/a', 'https://example.com/b'], depth: 2, max_pages: 50, params: {} },
  cron: '* * * * *',
  interval_ms: null,
  run_at: null,
  status: 'active',
  last_scheduled: null,
  last_job_id: null,
  next_due: new Date('2026-01-01T10:00:00Z'),
  created_at: new Date('2026-01-01T09:00:00Z'),
  paused_reason: null,
  paused_message: null,
  paused_at: null,
  skipped_at: null,
  skipped_reason: null,
  time_zone: 'UTC',
  overlap: 'skip',
  dedupe: false,
};

describe('planDispatch', () => {
  it('derives the same job and event ids for the same slot, so a re-dispatch is a duplicate', () => {
    const slot = new Date('2026-01-01T10:00:00Z');
    const a = planDispatch({ schedule, slot });
    const b = planDispatch({ schedule, slot });
    expect(b.jobId).toBe(a.jobId);
    expect(b.targetDue.id).toBe(a.targetDue.id);
    expect(b.jobDispatched.id).toBe(a.jobDispatched.id);
  });

  it('gives every slot its own job', () => {
    const a = planDispatch({ schedule, slot: new Date('2026-01-01T10:00:00Z') });
    const b = planDispatch({ schedule, slot: new Date('2026-01-01T10:01:00Z') });
    expect(b.jobId).not.toBe(a.jobId);
  });

  it('carries the request limits into the job spec', () => {
    const { jobDispatched } = planDispatch({ schedule, slot: new Date() });
    expect(jobDispatched.body.start_urls).toEqual(schedule.request!.start_urls);
    expect(jobDispatched.body.search_url).toBe('https://example.com/a');
    expect(jobDispatched.body.spec.max_depth).toBe(2);
    expect(jobDispatched.body.spec.max_pages).toBe(50);
    expect(jobDispatched.body.spec.same_host).toBe(true);
  });

  it('carries the content formats a schedule keeps into each run\'s spec, none when its request names none', () => {
    expect(planDispatch({ schedule: { ...schedule, request: { ...schedule.request!, formats: ['markdown'] } }, slot: new Date() }).jobDispatched.body.spec.formats).toEqual(['markdown']);
    expect(planDispatch({ schedule, slot: new Date() }).jobDispatched.body.spec.formats).toEqual([]);
  });

  it("carries the request's HTTP cache settings into the job spec (none by default)", () => {
    expect(planDispatch({ schedule, slot: new Date() }).jobDispatched.body.spec).toMatchObject({ max_age: null, ignore_cache: false });
    const cached = { ...schedule, request: { ...schedule.request!, max_age: 900, ignore_cache: true } };
    expect(planDispatch({ schedule: cached, slot: new Date() }).jobDispatched.body.spec).toMatchObject({ max_age: 900, ignore_cache: true });
  });

  it("keeps bodies for the HTTP cache in a recurring schedule's runs, not in a one-time run, unless the request says", () => {
    const spec = (s: Schedule) => planDispatch({ schedule: s, slot: new Date() }).jobDispatched.body.spec;
    expect(spec(schedule).store_in_cache).toBe(true);
    expect(spec({ ...schedule, cron: null, interval_ms: 3_600_000 }).store_in_cache).toBe(true);
    expect(spec({ ...schedule, cron: null, run_at: new Date() }).store_in_cache).toBe(false);
    expect(spec({ ...schedule, request: { ...schedule.request!, store_in_cache: false } }).store_in_cache).toBe(false);
    expect(spec({ ...schedule, cron: null, run_at: new Date(), request: { ...schedule.request!, store_in_cache: true } }).store_in_cache).toBe(true);
    const target = { id: 't1', owner_id: 'alice', website_id: 'w1', name: null, url_template: 'https://jobs.example/', keywords: [], location: null, active: true };
    expect(planDispatch({ schedule: { ...schedule, request: null, target_id: 't1' }, slot: new Date(), target }).jobDispatched.body.spec.store_in_cache).toBe(true);
  });

  it("carries the request's sitemap mode into the job spec (include by default)", () => {
    expect(planDispatch({ schedule, slot: new Date() }).jobDispatched.body.spec.sitemap).toBe('include');
    const only = { ...schedule, request: { ...schedule.request!, sitemap: 'only' as const } };
    expect(planDispatch({ schedule: only, slot: new Date() }).jobDispatched.body.spec.sitemap).toBe('only');
  });

  it("cuts the job's max_pages to the owner's page cap, never raises it", () => {
    expect(planDispatch({ schedule, slot: new Date(), pageCap: 20 }).jobDispatched.body.spec.max_pages).toBe(20);
    expect(planDispatch({ schedule, slot: new Date(), pageCap: 500 }).jobDispatched.body.spec.max_pages).toBe(50);
  });

  it('fills a target URL template from keywords and location', () => {
    const target = { id: 't1', owner_id: 'alice', website_id: 'w1', name: null, url_template: 'https://jobs.example/search?q={keywords}&l={location}', keywords: ['rust', 'kafka'], location: 'Berlin', active: true };
    const { jobDispatched } = planDispatch({ schedule: { ...schedule, request: null, target_id: 't1' }, slot: new Date(), target });
    expect(jobDispatched.body.search_url).toBe('https://jobs.example/search?q=rust%20kafka&l=Berlin');
    expect(jobDispatched.body.keywords).toEqual(['rust', 'kafka']);
  });
});
