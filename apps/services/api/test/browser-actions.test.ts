/**
 * Browser actions and list pagination through the API: a list over its bound is 400
 * ACTIONS_TOO_MANY, an action without what its type needs 400 INVALID_ACTION, a costly selector
 * 400 UNSUPPORTED_SELECTOR — on POST /crawl, a schedule and a website, with nothing stored or sent
 * and no typed text echoed; an accepted list reaches the job's spec, which then renders in the
 * browser, and `screenshot` / `pdf` are formats a crawl may ask for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrawlSpec } from '@trawl/schemas';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const SITE = 'http://shop.example/';
const TYPED = 'typed-words-never-echoed';

async function post(url: string, auth: object, payload: object) {
  return api.app.inject({ method: 'POST', url, headers: auth as Record<string, string>, payload });
}

const wait = { type: 'wait', ms: 10 };

describe('POST /crawl refuses actions it could not run: 400 with a code, nothing stored or sent', () => {
  it.each([
    ['51 actions', { actions: Array.from({ length: 51 }, () => wait) }, 'ACTIONS_TOO_MANY', 'actions'],
    ['a click without a selector', { actions: [wait, { type: 'click' }] }, 'INVALID_ACTION', 'actions.1.selector'],
    ['a type without text', { actions: [{ type: 'type', selector: '#q' }] }, 'INVALID_ACTION', 'actions.0.text'],
    ['a press without a key', { actions: [{ type: 'press' }] }, 'INVALID_ACTION', 'actions.0.key'],
    ['a wait without ms', { actions: [{ type: 'wait' }] }, 'INVALID_ACTION', 'actions.0.ms'],
    ['text on a click', { actions: [{ type: 'click', selector: 'a', text: TYPED }] }, 'INVALID_ACTION', 'actions.0.text'],
    ['a selector that is none', { actions: [{ type: 'wait_for', selector: 'div[' }] }, 'INVALID_ACTION', 'actions.0.selector'],
    ['a costly selector', { actions: [{ type: 'type', selector: 'li:has(~ li)', text: TYPED }] }, 'UNSUPPORTED_SELECTOR', 'actions.0.selector'],
    ['a costly selector in a browser login', { sessions: 1, login: { kind: 'browser', url: `${SITE}login`, success_selector: '#me', actions: [{ type: 'click', selector: 'a ~ b' }] } }, 'UNSUPPORTED_SELECTOR', 'login.actions.0.selector'],
  ])('%s', async (_name, options, code, field) => {
    const { user, auth } = await api.user();
    const before = api.sent.length;
    const res = await post('/crawl', auth, { start_urls: [SITE], depth: 0, ...options });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code, field });
    expect(res.body).not.toContain(TYPED);
    expect(api.sent.length).toBe(before);
    const stored = await api.db.pool.query('SELECT 1 FROM api_jobs WHERE user_id = $1 UNION ALL SELECT 1 FROM crawl_dedupe WHERE user_id = $1', [user]);
    expect(stored.rowCount).toBe(0);
  });

  it('refuses them on a schedule and a website too, and a load-more list without its button', async () => {
    const { user, auth } = await api.user();
    const schedule = await post('/crawl', auth, { start_urls: [SITE], depth: 0, interval: '1h', actions: [{ type: 'press', key: 'Enter; reboot' }] });
    expect(schedule.json().error).toMatchObject({ code: 'INVALID_ACTION', field: 'actions.0.key' });
    expect((await api.db.pool.query('SELECT 1 FROM schedules WHERE owner_id = $1', [user])).rowCount).toBe(0);
    const website = await post('/websites', auth, { name: 'Shop', base_url: SITE, actions: Array.from({ length: 60 }, () => wait) });
    expect(website.json().error).toMatchObject({ code: 'ACTIONS_TOO_MANY' });
    const noButton = await post('/websites', auth, { name: 'Shop', base_url: SITE, pagination_type: 'load_more' });
    expect(noButton.json().error).toMatchObject({ code: 'INVALID_ACTION', field: 'load_more_selector' });
    const costlyButton = await post('/websites', auth, { name: 'Shop', base_url: SITE, pagination_type: 'load_more', load_more_selector: 'b ~ button' });
    expect(costlyButton.json().error).toMatchObject({ code: 'UNSUPPORTED_SELECTOR', field: 'load_more_selector' });
    expect((await api.db.pool.query('SELECT 1 FROM websites WHERE owner_id = $1', [user])).rowCount).toBe(0);
  });
});

describe('accepted actions', () => {
  it('reach the job spec in order, which renders in the browser and keeps a screenshot and a PDF', async () => {
    const { auth } = await api.user();
    const actions = [{ type: 'click', selector: '#accept' }, { type: 'type', selector: '#q', text: 'boots' }, { type: 'press', key: 'Enter' }, { type: 'scroll', times: 2 }, { type: 'screenshot', full_page: true }];
    const before = api.sent.length;
    const res = await post('/crawl', auth, { start_urls: [SITE], depth: 0, actions, formats: ['markdown', 'screenshot', 'pdf'] });
    expect(res.statusCode, res.body).toBe(200);
    const dispatched = api.sent.slice(before).find((e) => e.name === 'JobDispatched');
    const spec = (dispatched!.body as unknown as { spec: CrawlSpec }).spec;
    expect(spec.actions.map((a) => a.type)).toEqual(['click', 'type', 'press', 'scroll', 'screenshot']);
    expect(spec.actions[3]).toMatchObject({ times: 2, selector: null });
    expect(spec.formats).toEqual(['markdown', 'screenshot', 'pdf']);
    expect(spec.requires_browser).toBe(true);
  });

  it('a load-more website gives its pagination to the spec', async () => {
    const { auth } = await api.user();
    const website = await post('/websites', auth, { id: 'more-list', name: 'More', base_url: SITE, pagination_type: 'load_more', load_more_selector: '#load-more', item_root: 'li.item' });
    expect(website.statusCode, website.body).toBe(201);
    const before = api.sent.length;
    const res = await post('/crawl', auth, { spider: 'more-list', start_urls: [SITE], depth: 0 });
    expect(res.statusCode, res.body).toBe(200);
    const spec = (api.sent.slice(before).find((e) => e.name === 'JobDispatched')!.body as unknown as { spec: CrawlSpec }).spec;
    expect(spec).toMatchObject({ pagination_type: 'load_more', load_more_selector: '#load-more', requires_browser: true });
  });
});
