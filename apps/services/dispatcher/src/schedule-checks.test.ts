import { describe, expect, it } from 'vitest';
import { crawlSpec, type Schedule, type Target, type Website } from '@trawl/store';
import { resolveSchedule } from './schedule-checks.ts';

const base: Schedule = {
  id: 's1', owner_id: 'alice', target_id: null, request: null, cron: '0 * * * *', interval_ms: null, run_at: null, status: 'active',
  last_scheduled: null, last_job_id: null, next_due: new Date(), created_at: new Date(),
  paused_reason: null, paused_message: null, paused_at: null, skipped_at: null, skipped_reason: null, time_zone: 'UTC', overlap: 'skip', dedupe: false,
};
const request = { spider: 'shop', start_urls: ['https://shop.example/'], depth: 1, max_pages: 10, params: {} };
const website = (owner: string | null): Website => ({ ...crawlSpec(null), id: 'shop', owner_id: owner, name: 'Shop', base_url: 'https://shop.example/', next_link_selector: null, page_param: null, item_root: null });
const target = (owner: string | null, active = true): Target => ({ id: 't1', owner_id: owner, website_id: 'shop', name: null, url_template: 'https://shop.example/?q={keywords}', keywords: [], location: null, active });
const sites = (...list: Website[]) => new Map(list.map((w) => [w.id, w]));

describe('resolveSchedule', () => {
  it('runs a crawl of start URLs without a website', () => {
    expect(resolveSchedule({ ...base, request: { ...request, spider: null } }, new Map(), new Map())).toEqual({ kind: 'run', target: null, website: null });
  });

  it("runs with the owner's own website, or a shared one", () => {
    expect(resolveSchedule({ ...base, request }, new Map(), sites(website('alice')))).toMatchObject({ kind: 'run', website: { owner_id: 'alice' } });
    expect(resolveSchedule({ ...base, request }, new Map(), sites(website(null)))).toMatchObject({ kind: 'run', website: { owner_id: null } });
  });

  it('pauses WEBSITE_GONE when the website was deleted', () => {
    expect(resolveSchedule({ ...base, request }, new Map(), new Map())).toEqual({ kind: 'pause', reason: 'WEBSITE_GONE', message: 'website "shop" no longer exists' });
  });

  it("pauses WEBSITE_NOT_OWNED when the id now names another user's website", () => {
    expect(resolveSchedule({ ...base, request }, new Map(), sites(website('mallory')))).toMatchObject({ kind: 'pause', reason: 'WEBSITE_NOT_OWNED' });
    // A platform schedule (no owner) does not run a user's website either.
    expect(resolveSchedule({ ...base, owner_id: null, request }, new Map(), sites(website('mallory')))).toMatchObject({ kind: 'pause', reason: 'WEBSITE_NOT_OWNED' });
  });

  it("checks a target's owner and its website's owner", () => {
    const s = { ...base, target_id: 't1' };
    expect(resolveSchedule(s, new Map([['t1', target('alice')]]), sites(website('alice')))).toMatchObject({ kind: 'run', target: { id: 't1' } });
    expect(resolveSchedule(s, new Map([['t1', target('mallory')]]), sites(website('alice')))).toMatchObject({ kind: 'pause', reason: 'TARGET_NOT_OWNED' });
    expect(resolveSchedule(s, new Map([['t1', target('alice')]]), sites(website('mallory')))).toMatchObject({ kind: 'pause', reason: 'WEBSITE_NOT_OWNED' });
    expect(resolveSchedule(s, new Map([['t1', target(null)]]), sites(website(null)))).toMatchObject({ kind: 'run' });
  });

  it('cancels when the target is gone or inactive', () => {
    const s = { ...base, target_id: 't1' };
    expect(resolveSchedule(s, new Map(), sites(website('alice')))).toMatchObject({ kind: 'cancel', reason: 'TARGET_GONE' });
    expect(resolveSchedule(s, new Map([['t1', target('alice', false)]]), sites(website('alice')))).toMatchObject({ kind: 'cancel' });
  });
});
