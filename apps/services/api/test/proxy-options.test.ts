/**
 * Proxies through the API: `proxy` / `proxies` on POST /crawl, a schedule and a website. A proxy at
 * an address crawls may not reach (loopback, private, a stack port, localhost) is 400
 * PROXY_NOT_ALLOWED, a malformed one or one with credentials in its URL 400 INVALID_PROXY, with
 * nothing stored or sent and no credential echoed; an accepted one reaches the job's spec with its
 * credentials sealed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ config: { dedupeTtlSeconds: 3600 } });
});
afterAll(async () => {
  await api?.close();
});

const SITE = 'http://shop.example/';
const PASSWORD = 'proxy-PASS-never-echoed';

async function post(url: string, auth: object, payload: object) {
  return api.app.inject({ method: 'POST', url, headers: auth as Record<string, string>, payload });
}

describe('POST /crawl refuses proxies it may not use: 400 with a code, nothing stored or sent', () => {
  it.each([
    ['a proxy on loopback (a stack port)', { proxy: 'http://127.0.0.1:5432' }, 'PROXY_NOT_ALLOWED', 'proxies[0]'],
    ['a proxy on a private address', { proxies: [{ url: 'socks5://10.1.2.3:1080' }] }, 'PROXY_NOT_ALLOWED', 'proxies[0]'],
    ['the metadata address', { proxy: 'http://169.254.169.254' }, 'PROXY_NOT_ALLOWED', 'proxies[0]'],
    ['localhost', { proxies: [{ url: 'http://proxy.example:3128' }, { url: 'http://localhost:3128' }] }, 'PROXY_NOT_ALLOWED', 'proxies[1]'],
    ['credentials in the URL', { proxy: `http://user:${PASSWORD}@proxy.example:3128` }, 'INVALID_PROXY', 'proxies[0]'],
    ['a scheme that is not http, https or socks5', { proxy: 'socks4://proxy.example:1080' }, 'INVALID_PROXY', 'proxies[0]'],
  ])('%s', async (_name, options, code, field) => {
    const { user, auth } = await api.user();
    const before = api.sent.length;
    const res = await post('/crawl', auth, { start_urls: [SITE], depth: 0, ...options });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code, field });
    expect(res.body).not.toContain(PASSWORD);
    expect(api.sent.length).toBe(before);
    const stored = await api.db.pool.query('SELECT 1 FROM api_jobs WHERE user_id = $1 UNION ALL SELECT 1 FROM crawl_dedupe WHERE user_id = $1', [user]);
    expect(stored.rowCount).toBe(0);
  });

  it('refuses them on a schedule and a website too, storing neither', async () => {
    const { user, auth } = await api.user();
    const schedule = await post('/crawl', auth, { start_urls: [SITE], depth: 0, interval: '1h', proxy: 'http://192.168.1.1:3128' });
    expect(schedule.json().error).toMatchObject({ code: 'PROXY_NOT_ALLOWED' });
    expect((await api.db.pool.query('SELECT 1 FROM schedules WHERE owner_id = $1', [user])).rowCount).toBe(0);
    const website = await post('/websites', auth, { name: 'Shop', base_url: SITE, proxies: [{ url: 'http://[::1]:9092' }] });
    expect(website.statusCode, website.body).toBe(400);
    expect(website.json().error).toMatchObject({ code: 'PROXY_NOT_ALLOWED' });
  });
});

describe('an accepted proxy pool', () => {
  it('reaches the job spec with its rotation, and its password sealed', async () => {
    const { auth } = await api.user();
    const res = await post('/crawl', auth, {
      start_urls: [SITE], depth: 0,
      proxies: [{ url: 'http://proxy-1.example:3128', username: 'crawler', password: PASSWORD }, { url: 'socks5://proxy-2.example:1080' }],
      proxy_rotation: 'random',
    });
    expect(res.statusCode, res.body).toBe(200);
    const dispatched = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === res.json().job_id)!;
    const spec = dispatched.body.spec as { proxies: { url: string; username: string | null; password: string | null }[]; proxy_rotation: string };
    expect(spec.proxy_rotation).toBe('random');
    expect(spec.proxies.map((p) => p.url)).toEqual(['http://proxy-1.example:3128', 'socks5://proxy-2.example:1080']);
    expect(spec.proxies[0]!.password).toMatch(/^tsec1\./);
    expect(JSON.stringify(api.sent)).not.toContain(PASSWORD);
  });
});
