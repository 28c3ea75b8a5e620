/** Websites and targets CRUD, and schedules of targets. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlSpec, upsertWebsite } from '@trawl/store';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) =>
  api.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

describe('websites', () => {
  it('create, read, list, replace and delete, with defaults filled in', async () => {
    const { auth } = await api.user();
    const created = await req('POST', '/websites', auth, {
      id: `jobs-board-${Date.now()}`, name: 'Jobs board', base_url: 'http://127.0.0.1:8090/', item_root: '.job',
      item_fields: [{ name: 'title', selector: 'h2' }, { name: 'link', selector: 'a', attribute: 'href' }],
      pagination_type: 'next_link', next_link_selector: 'a.next',
    });
    expect(created.statusCode).toBe(201);
    const site = created.json();
    expect(site).toMatchObject({ name: 'Jobs board', max_depth: 1, max_pages: 1000, same_host: true, shared: false, requires_browser: false });
    expect(site.item_fields[0]).toEqual({ name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] });
    expect((await req('GET', `/websites/${site.id}`, auth)).json()).toMatchObject({ id: site.id, pagination_type: 'next_link' });
    const replaced = await req('PUT', `/websites/${site.id}`, auth, { name: 'Jobs board 2', base_url: 'http://127.0.0.1:8090/', max_depth: 3 });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({ name: 'Jobs board 2', max_depth: 3, item_fields: [] });
    expect((await req('GET', '/websites', auth)).json().websites.map((w: { id: string }) => w.id)).toContain(site.id);
    expect((await req('POST', '/websites', auth, { id: site.id, name: 'dup', base_url: 'http://a.test/' })).json().error.code).toBe('ID_TAKEN');
    expect((await req('DELETE', `/websites/${site.id}`, auth)).statusCode).toBe(204);
    expect((await req('GET', `/websites/${site.id}`, auth)).statusCode).toBe(404);
  });

  it('shared websites are visible to all and read-only', async () => {
    const { auth } = await api.user();
    const id = `shared-${Date.now()}`;
    await upsertWebsite(api.db.pool, { ...crawlSpec(null), id, owner_id: null, name: 'Shared', base_url: 'http://a.test/', next_link_selector: null, page_param: null, item_root: null });
    expect((await req('GET', `/websites/${id}`, auth)).json()).toMatchObject({ id, shared: true });
    expect((await req('PUT', `/websites/${id}`, auth, { name: 'mine', base_url: 'http://a.test/' })).json().error.code).toBe('READ_ONLY_RESOURCE');
    expect((await req('DELETE', `/websites/${id}`, auth)).json().error.code).toBe('READ_ONLY_RESOURCE');
  });

  it('refuses invalid regular expressions, bad URLs and unknown fields', async () => {
    const { auth } = await api.user();
    const badRegex = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', include_patterns: ['ok', '(unclosed'] });
    expect(badRegex.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'include_patterns.1' });
    expect((await req('POST', '/websites', auth, { name: 'x', base_url: 'mailto:a@b.c' })).json().error.field).toBe('base_url');
    expect((await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', colour: 'red' })).json().error.field).toBe('colour');
  });

  it('refuses a pattern the linear-time engine does not run, naming the construct; runs the catastrophic one', async () => {
    const { auth } = await api.user();
    const lookahead = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', exclude_patterns: ['\\.pdf$', '/jobs(?!/open)'] });
    expect(lookahead.statusCode).toBe(400);
    expect(lookahead.json().error).toMatchObject({ code: 'UNSUPPORTED_PATTERN', field: 'exclude_patterns.1' });
    expect(lookahead.json().error.message).toContain('a negative lookahead');
    const backreference = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', include_patterns: ['/(\\w+)/\\1'] });
    expect(backreference.json().error).toMatchObject({ code: 'UNSUPPORTED_PATTERN', field: 'include_patterns.0' });
    expect(backreference.json().error.message).toContain('a backreference (\\1)');
    // Exponential for a backtracking engine, linear in RE2: accepted.
    const nested = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', include_patterns: ['^https?://[^/]+/(a+)+$'] });
    expect(nested.statusCode).toBe(201);
  });

  it('refuses a crawl whose spider was saved with a pattern the engine does not run', async () => {
    const { user, auth } = await api.user();
    const id = `legacy-${Date.now()}`;
    await upsertWebsite(api.db.pool, { ...crawlSpec(null), id, owner_id: user, name: 'Legacy', base_url: 'http://a.test/', next_link_selector: null, page_param: null, item_root: null, include_patterns: ['(?<=/)jobs'] });
    const r = await req('POST', '/crawl', auth, { spider: id, start_urls: ['http://a.test/'], depth: 0 });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toMatchObject({ code: 'UNSUPPORTED_PATTERN', field: 'spider' });
    expect(r.json().error.message).toMatch(/include_patterns\.0 uses a lookbehind/);
  });

  it('refuses a selector whose cost grows with the page, and one that is no selector, naming the field', async () => {
    const { user, auth } = await api.user();
    const sibling = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', item_root: 'a:has(~ b)' });
    expect(sibling.statusCode).toBe(400);
    expect(sibling.json().error).toMatchObject({ code: 'UNSUPPORTED_SELECTOR', field: 'item_root' });
    expect(sibling.json().error.message).toContain('sibling combinator');
    const field = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', item_root: '.job', item_fields: [{ name: 't', selector: 'h2' }, { name: 'c', selector: 'div:has(:contains("x"))' }] });
    expect(field.json().error).toMatchObject({ code: 'UNSUPPORTED_SELECTOR', field: 'item_fields.1.selector' });
    const broken = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', next_link_selector: 'a[' });
    expect(broken.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'next_link_selector' });
    const usual = await req('POST', '/websites', auth, { name: 'x', base_url: 'http://a.test/', item_root: 'div:has(> a.apply)', item_fields: [{ name: 't', selector: 'h2:first' }], next_link_selector: 'a:contains("Next")' });
    expect(usual.statusCode).toBe(201);
    // Saved before the check: a crawl with it is refused, not run page by page.
    const id = `legacy-selector-${Date.now()}`;
    await upsertWebsite(api.db.pool, { ...crawlSpec(null), id, owner_id: user, name: 'Legacy', base_url: 'http://a.test/', next_link_selector: null, page_param: null, item_root: 'li ~ li' });
    const crawl = await req('POST', '/crawl', auth, { spider: id, start_urls: ['http://a.test/'], depth: 0 });
    expect(crawl.json().error).toMatchObject({ code: 'UNSUPPORTED_SELECTOR', field: 'spider' });
  });

  it('a website with targets cannot be deleted', async () => {
    const { auth } = await api.user();
    const site = (await req('POST', '/websites', auth, { name: 'S', base_url: 'http://a.test/' })).json();
    await req('POST', '/targets', auth, { website_id: site.id, url_template: 'http://a.test/?q={keywords}' });
    expect((await req('DELETE', `/websites/${site.id}`, auth)).json().error.code).toBe('WEBSITE_IN_USE');
  });
});

describe('targets', () => {
  it('create, read, list, replace, schedule and delete (which cancels its schedules)', async () => {
    const { auth } = await api.user();
    const site = (await req('POST', '/websites', auth, { name: 'S', base_url: 'http://a.test/' })).json();
    const created = await req('POST', '/targets', auth, {
      website_id: site.id, name: 'Go jobs in Berlin', url_template: 'http://a.test/search?q={keywords}&l={location}', keywords: ['go', 'dev'], location: 'Berlin',
    });
    expect(created.statusCode).toBe(201);
    const target = created.json();
    expect(target).toMatchObject({ active: true, search_url: 'http://a.test/search?q=go%20dev&l=Berlin' });
    expect((await req('GET', `/targets/${target.id}`, auth)).json().name).toBe('Go jobs in Berlin');
    const replaced = await req('PUT', `/targets/${target.id}`, auth, { website_id: site.id, url_template: 'http://a.test/x', keywords: [] });
    expect(replaced.statusCode).toBe(200);
    expect((await req('GET', '/targets', auth)).json().targets).toHaveLength(1);

    const schedule = await req('POST', '/schedules', auth, { target_id: target.id, interval: '0 * * * *' });
    expect(schedule.statusCode).toBe(201);
    expect(schedule.json()).toMatchObject({ target_id: target.id, status: 'active', cron: '0 * * * *' });
    expect((await req('POST', '/schedules', auth, { target_id: target.id })).json().error.code).toBe('VALIDATION_FAILED');
    expect((await req('POST', '/schedules', auth, { target_id: 'nope', interval: '1h' })).json().error.code).toBe('TARGET_NOT_FOUND');

    // Another user's delete finds nothing and changes nothing: the schedule stays active.
    const stranger = await api.user();
    expect((await req('DELETE', `/targets/${target.id}`, stranger.auth)).json().error.code).toBe('TARGET_NOT_FOUND');
    expect((await req('GET', `/schedules/${schedule.json().schedule_id}`, auth)).json().status).toBe('active');

    expect((await req('DELETE', `/targets/${target.id}`, auth)).statusCode).toBe(204);
    expect((await req('GET', `/targets/${target.id}`, auth)).json().active).toBe(false);
    expect((await req('GET', `/schedules/${schedule.json().schedule_id}`, auth)).json().status).toBe('cancelled');
  });

  it("refuses a website the caller cannot see, and a template that is not an http URL", async () => {
    const alice = await api.user();
    const bob = await api.user();
    const site = (await req('POST', '/websites', alice.auth, { name: 'A', base_url: 'http://a.test/' })).json();
    const res = await req('POST', '/targets', bob.auth, { website_id: site.id, url_template: 'http://a.test/' });
    expect(res.json().error).toMatchObject({ code: 'UNKNOWN_WEBSITE', field: 'website_id' });
    const bad = await req('POST', '/targets', alice.auth, { website_id: site.id, url_template: 'gopher://a.test/{keywords}' });
    expect(bad.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'url_template' });
  });
});
