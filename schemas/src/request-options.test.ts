import { describe, expect, it } from 'vitest';
import { hasRequestOptions, mergeRequestOptions, requestOptionsKey } from './request-options.ts';

const website = { headers: { 'X-Token': 'site', 'X-Site': '1' }, user_agent: 'SiteBot/1', locale: 'de-DE', cookies: { 'shop.example': ['a=1'], 'cdn.example': ['c=1'] } };
const schedule = { headers: { 'x-token': 'schedule' }, locale: 'fr-CH', cookies: { 'shop.example': ['b=2'] } };
const crawl = { headers: { 'X-Crawl': 'yes' }, user_agent: 'CrawlBot/2' };

describe('merging request options: the crawl over the schedule over the website, field by field', () => {
  it('takes each scalar from the most specific layer that sets it', () => {
    const merged = mergeRequestOptions(website, schedule, crawl);
    expect(merged.user_agent).toBe('CrawlBot/2');
    expect(merged.locale).toBe('fr-CH');
    expect(mergeRequestOptions(website, schedule, {}).user_agent).toBe('SiteBot/1');
    expect(mergeRequestOptions(website, { locale: null }).locale).toBe('de-DE');
  });

  it('merges headers name by name, case-insensitively, the later layer winning', () => {
    expect(mergeRequestOptions(website, schedule, crawl).headers).toEqual({ 'x-token': 'schedule', 'x-site': '1', 'x-crawl': 'yes' });
  });

  it("merges cookies domain by domain, a layer's list replacing the earlier one for its domain", () => {
    expect(mergeRequestOptions(website, schedule, crawl).cookies).toEqual({ 'shop.example': ['b=2'], 'cdn.example': ['c=1'] });
  });

  it('gives nothing for no layers, and skips absent ones', () => {
    const none = mergeRequestOptions(null, undefined, {});
    expect(none).toEqual({ headers: {}, user_agent: null, locale: null, cookies: {} });
    expect(hasRequestOptions(none)).toBe(false);
    expect(requestOptionsKey(none)).toBe('');
  });

  it('fingerprints options whatever their order, and never holds a cookie value', () => {
    const a = requestOptionsKey({ headers: { a: '1', b: '2' }, cookies: { 'x.test': ['sid=SECRET'] } });
    const b = requestOptionsKey({ cookies: { 'x.test': ['sid=SECRET'] }, headers: { b: '2', A: '1' } });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(requestOptionsKey({ cookies: { 'x.test': ['sid=OTHER'] } })).not.toBe(requestOptionsKey({ cookies: { 'x.test': ['sid=SECRET'] } }));
  });
});
