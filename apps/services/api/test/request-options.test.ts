/**
 * Request options through the API: what is refused (400 with a code, nothing stored, nothing sent,
 * no cookie value in the answer), and what a job's spec carries — the crawl's own options over the
 * website's, field by field — for immediate crawls, schedules and websites.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSealed, openCredential, secretBoxFromEnv } from '@trawl/store/secrets';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ config: { dedupeTtlSeconds: 3600 } });
});
afterAll(async () => {
  await api?.close();
});

const SITE = 'http://shop.example/';
const SECRET = 'sid-VALUE-never-echoed';

async function post(url: string, auth: object, payload: object) {
  return api.app.inject({ method: 'POST', url, headers: auth as Record<string, string>, payload });
}

describe('POST /crawl refuses bad request options: 400 with a code, nothing stored or sent', () => {
  it.each([
    ['a Host header', { headers: { Host: 'evil.example' } }, 'HEADER_NOT_ALLOWED', 'headers.Host'],
    ['a hop-by-hop header', { headers: { 'Transfer-Encoding': 'chunked' } }, 'HEADER_NOT_ALLOWED', 'headers.Transfer-Encoding'],
    ['a Proxy-* header', { headers: { 'Proxy-Authorization': 'Basic x' } }, 'HEADER_NOT_ALLOWED', 'headers.Proxy-Authorization'],
    ['a Cookie header', { headers: { Cookie: `sid=${SECRET}` } }, 'HEADER_NOT_ALLOWED', 'headers.Cookie'],
    ['CR/LF in a header value', { headers: { 'X-A': 'a\r\nX-Injected: 1' } }, 'INVALID_HEADER', 'headers.X-A'],
    // The API refuses NUL anywhere in a body first (Postgres cannot store it).
    ['a NUL in a header value', { headers: { 'X-A': 'a\u0000b' } }, 'VALIDATION_FAILED', 'headers.X-A'],
    ['a header name that is no token', { headers: { 'X A': '1' } }, 'INVALID_HEADER', 'headers'],
    ['CR/LF in the user agent', { user_agent: 'Bot\r\nX: 1' }, 'INVALID_HEADER', 'user_agent'],
    ['33 headers', { headers: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x-h${i}`, 'v'])) }, 'REQUEST_OPTIONS_TOO_LARGE', 'headers'],
    ['a locale that is no BCP 47 tag', { locale: 'fr_CH' }, 'INVALID_LOCALE', 'locale'],
    ['a cookie that does not parse', { cookies: { 'shop.example': [`${SECRET}`] } }, 'INVALID_COOKIE', 'cookies.shop.example.0'],
    ['a cookie with CR/LF', { cookies: { 'shop.example': [`sid=${SECRET}\r\nSet-Cookie: x=1`] } }, 'INVALID_COOKIE', 'cookies.shop.example.0'],
    ['a cookie for another domain', { cookies: { 'bank.example': [`sid=${SECRET}`] } }, 'COOKIE_DOMAIN_NOT_CRAWLED', 'cookies.bank.example'],
    ['a cookie whose Domain is elsewhere', { cookies: { 'shop.example': [`sid=${SECRET}; Domain=bank.example`] } }, 'INVALID_COOKIE', 'cookies.shop.example.0'],
  ])('%s', async (_name, options, code, field) => {
    const { user, auth } = await api.user();
    const before = api.sent.length;
    const res = await post('/crawl', auth, { start_urls: [SITE], depth: 0, ...options });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code, field });
    expect(res.body).not.toContain(SECRET);
    expect(api.sent.length).toBe(before);
    const stored = await api.db.pool.query('SELECT 1 FROM api_jobs WHERE user_id = $1 UNION ALL SELECT 1 FROM crawl_dedupe WHERE user_id = $1', [user]);
    expect(stored.rowCount).toBe(0);
  });

  it('refuses them on a schedule too, storing no schedule', async () => {
    const { user, auth } = await api.user();
    const res = await post('/crawl', auth, { start_urls: [SITE], depth: 0, interval: '1h', headers: { Connection: 'close' } });
    expect(res.json().error.code).toBe('HEADER_NOT_ALLOWED');
    expect((await api.db.pool.query('SELECT 1 FROM schedules WHERE owner_id = $1', [user])).rowCount).toBe(0);
  });
});

describe('request options in the job', () => {
  it("carry the website's options under the crawl's own, field by field", async () => {
    const { auth } = await api.user();
    const site = await post('/websites', auth, {
      name: 'Shop', base_url: SITE, allowed_hosts: ['*.cdn.example'],
      headers: { 'X-Site': 'site', 'X-Token': 'from-site' }, user_agent: 'SiteBot/1', locale: 'de-DE',
      cookies: { 'shop.example': ['consent=yes'], 'img.cdn.example': ['cdn=1'] },
    });
    expect(site.statusCode, site.body).toBe(201);
    // Header and cookie values are write-only: the view names headers only; cookies are kept sealed whole (their names too).
    expect(site.json()).toMatchObject({ headers: { 'X-Site': '***', 'X-Token': '***' }, user_agent: 'SiteBot/1', locale: 'de-DE', cookies: { 'shop.example': ['***'] } });
    expect(site.body).not.toContain('from-site');
    // Stored sealed: the websites row holds no value.
    const row = JSON.stringify((await api.db.pool.query('SELECT headers, cookies FROM websites WHERE id = $1', [site.json().id])).rows[0]);
    for (const clear of ['from-site', 'consent=yes', 'cdn=1']) expect(row).not.toContain(clear);
    const res = await post('/crawl', auth, {
      spider: site.json().id, start_urls: [SITE], depth: 0,
      headers: { 'x-token': 'from-crawl' }, locale: 'fr-CH', cookies: { 'shop.example': [`sid=${SECRET}`] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const dispatched = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === res.json().job_id)!;
    const spec = dispatched.body.spec as { headers: Record<string, string>; cookies: Record<string, string[]> };
    // The spec carries every header value and cookie sealed; the worker's key opens them.
    expect(JSON.stringify(spec)).not.toContain(SECRET);
    const box = secretBoxFromEnv();
    const open = (v: string) => (expect(isSealed(v), v).toBe(true), openCredential(box, v));
    expect(spec).toMatchObject({ user_agent: 'SiteBot/1', locale: 'fr-CH' });
    expect(Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [k, open(v)]))).toEqual({ 'x-site': 'site', 'x-token': 'from-crawl' });
    expect(Object.fromEntries(Object.entries(spec.cookies).map(([d, l]) => [d, l.map(open)]))).toEqual({ 'shop.example': [`sid=${SECRET}`], 'img.cdn.example': ['cdn=1'] });
  });

  it('make another crawl for the dedupe: other cookies, another job', async () => {
    const { auth } = await api.user();
    const base = { start_urls: [SITE], depth: 0 };
    const a = (await post('/crawl', auth, { ...base, cookies: { 'shop.example': ['sid=a'] } })).json();
    const b = (await post('/crawl', auth, { ...base, cookies: { 'shop.example': ['sid=b'] } })).json();
    const again = (await post('/crawl', auth, { ...base, cookies: { 'shop.example': ['sid=a'] } })).json();
    expect(b.job_id).not.toBe(a.job_id);
    expect(again).toMatchObject({ job_id: a.job_id, cached: true });
  });

  it("are stored with a schedule's request, and checked when it changes", async () => {
    const { auth } = await api.user();
    const res = await post('/crawl', auth, { start_urls: [SITE], depth: 0, interval: '1h', user_agent: 'NightlyBot/1', headers: { 'X-A': '1' } });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().schedule_id;
    const view = await api.app.inject({ method: 'GET', url: `/schedules/${id}`, headers: auth });
    expect(view.json().request).toMatchObject({ user_agent: 'NightlyBot/1', headers: { 'X-A': '***' } });
    const patch = await api.app.inject({ method: 'PATCH', url: `/schedules/${id}`, headers: auth, payload: { request: { start_urls: [SITE], depth: 0, locale: 'not a locale' } } });
    expect(patch.json().error.code).toBe('INVALID_LOCALE');
  });
});

describe('a website with bad request options', () => {
  it('is refused and not stored', async () => {
    const { auth } = await api.user();
    const res = await post('/websites', auth, { id: 'bad-options-site', name: 'Bad', base_url: SITE, cookies: { 'other.example': [`sid=${SECRET}`] } });
    expect(res.json().error).toMatchObject({ code: 'COOKIE_DOMAIN_NOT_CRAWLED', field: 'cookies.other.example' });
    expect(res.body).not.toContain(SECRET);
    expect((await api.app.inject({ method: 'GET', url: '/websites/bad-options-site', headers: auth })).statusCode).toBe(404);
  });
});
