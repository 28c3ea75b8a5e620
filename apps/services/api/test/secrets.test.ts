/**
 * The secrets routes: create or replace (201/200), list names and times only, delete (204/404),
 * each user's own; values sealed at rest and never in an answer; the per-user count and the value
 * size bounded.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCredential, resolveUserSecrets, secretBoxFromEnv } from '@trawl/store/secrets';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ config: { secretLimits: { maxPerUser: 3, maxValueBytes: 64 } } });
});
afterAll(async () => {
  await api?.close();
});

describe('secrets API', () => {
  it('creates, replaces, lists and deletes a secret of its owner only; its value is never answered and sealed at rest', async () => {
    const { user, auth } = await api.user('secrets');
    const other = await api.user('other');
    const value = `s3cr3t-${randomUUID()}`;
    const created = await api.app.inject({ method: 'POST', url: '/secrets', headers: auth, payload: { name: 'shop.password', value } });
    expect(created.statusCode).toBe(201);
    expect(Object.keys(created.json()).sort()).toEqual(['created_at', 'name', 'updated_at']);
    expect(created.body).not.toContain(value);
    const replacedValue = `r3placed-${randomUUID()}`;
    const replaced = await api.app.inject({ method: 'POST', url: '/secrets', headers: auth, payload: { name: 'shop.password', value: replacedValue } });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().created_at).toBe(created.json().created_at);

    const list = await api.app.inject({ url: '/secrets', headers: auth });
    expect(list.json()).toEqual({ secrets: [replaced.json()] });
    expect(list.body).not.toContain(replacedValue);
    expect((await api.app.inject({ url: '/secrets', headers: other.auth })).json()).toEqual({ secrets: [] });

    const rows = JSON.stringify((await api.db.pool.query('SELECT * FROM user_secrets')).rows);
    expect(rows).not.toContain(value);
    expect(rows).not.toContain(replacedValue);
    expect(rows).not.toContain(Buffer.from(replacedValue).toString('base64'));
    expect(await resolveUserSecrets(api.db.pool, secretBoxFromEnv(), user, ['shop.password'])).toEqual(new Map([['shop.password', replacedValue]]));

    expect((await api.app.inject({ method: 'DELETE', url: '/secrets/shop.password', headers: other.auth })).json().error.code).toBe('SECRET_NOT_FOUND');
    expect((await api.app.inject({ method: 'DELETE', url: '/secrets/shop.password', headers: auth })).statusCode).toBe(204);
    expect((await api.app.inject({ method: 'DELETE', url: '/secrets/shop.password', headers: auth })).statusCode).toBe(404);
    expect((await api.app.inject({ url: '/secrets', headers: auth })).json()).toEqual({ secrets: [] });
  });

  it('bounds names, values and the number of secrets, and never echoes a refused value', async () => {
    const { auth } = await api.user('bounds');
    const post = (payload: object) => api.app.inject({ method: 'POST', url: '/secrets', headers: auth, payload });
    const big = 'é'.repeat(33); // 66 bytes over a 64-byte limit, 33 characters
    const tooBig = await post({ name: 'big', value: big });
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.json().error).toMatchObject({ code: 'SECRET_TOO_LARGE', field: 'value', limit: { name: 'secret_value_bytes', value: 64, used: 66 } });
    expect(tooBig.body).not.toContain(big);
    for (const name of ['', '-lead', 'has space', 'a/b', 'x'.repeat(65)]) {
      expect((await post({ name, value: 'v' })).json().error.code).toBe('VALIDATION_FAILED');
    }
    expect((await post({ name: 'n', value: '' })).json().error.code).toBe('VALIDATION_FAILED');
    expect((await post({ name: 'n', value: 'v', extra: 1 })).json().error.code).toBe('VALIDATION_FAILED');
    for (const name of ['a', 'b', 'c']) expect((await post({ name, value: 'v' })).statusCode).toBe(201);
    const over = await post({ name: 'd', value: 'v' });
    expect(over.statusCode).toBe(429);
    expect(over.json().error).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'secrets', value: 3, used: 3 } });
    expect((await post({ name: 'a', value: 'w' })).statusCode).toBe(200);
  });
});

describe('secrets named by crawls and websites', () => {
  const SITE = 'http://shop.example/';

  it("seals a named secret into the job's spec; another user's name is 400 UNKNOWN_SECRET and sends nothing", async () => {
    const { auth } = await api.user('named');
    const other = await api.user('other');
    const value = `tok-${randomUUID()}`;
    await api.app.inject({ method: 'POST', url: '/secrets', headers: auth, payload: { name: 'token', value } });
    await api.app.inject({ method: 'POST', url: '/secrets', headers: auth, payload: { name: 'session', value: `sid=${value}; Path=/` } });
    const body = { start_urls: [SITE], depth: 0, headers: { Authorization: { secret: 'token' } }, cookies: { 'shop.example': [{ secret: 'session' }] } };
    const res = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: body });
    expect(res.statusCode, res.body).toBe(200);
    const spec = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === res.json().job_id)!.body.spec as { headers: Record<string, string>; cookies: Record<string, string[]> };
    expect(JSON.stringify(spec)).not.toContain(value);
    const box = secretBoxFromEnv();
    expect(openCredential(box, spec.headers.authorization!)).toBe(value);
    expect(openCredential(box, spec.cookies['shop.example']![0]!)).toBe(`sid=${value}; Path=/`);
    const stored = JSON.stringify((await api.db.pool.query('SELECT * FROM api_jobs WHERE job_id = $1', [res.json().job_id])).rows);
    expect(stored).not.toContain(value);
    expect(stored).toContain('"secret":"token"');

    const sentBefore = api.sent.length;
    const refused = await api.app.inject({ method: 'POST', url: '/crawl', headers: other.auth, payload: body });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'UNKNOWN_SECRET', field: 'headers.Authorization' });
    expect(api.sent.length).toBe(sentBefore);
    expect((await api.db.pool.query('SELECT count(*)::int AS n FROM api_jobs WHERE user_id = $1', [other.user])).rows[0].n).toBe(0);
  });

  it('checks a named header or cookie by its value, never echoing it', async () => {
    const { auth } = await api.user('checked');
    const bad = `a\r\nX-Injected: ${randomUUID()}`;
    await api.app.inject({ method: 'POST', url: '/secrets', headers: auth, payload: { name: 'bad', value: bad } });
    const res = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: [SITE], depth: 0, headers: { 'X-A': { secret: 'bad' } } } });
    expect(res.json().error).toMatchObject({ code: 'INVALID_HEADER', field: 'headers.X-A' });
    expect(res.body).not.toContain('X-Injected');
  });

  it('keeps a website\'s literal credentials sealed and its secrets by name, shown as such', async () => {
    const { auth } = await api.user('site');
    await api.app.inject({ method: 'POST', url: '/secrets', headers: auth, payload: { name: 'site-token', value: 'tok-site-1' } });
    const res = await api.app.inject({ method: 'POST', url: '/websites', headers: auth, payload: { name: 'S', base_url: SITE, headers: { 'X-Token': { secret: 'site-token' }, 'X-Lit': 'lit-value-1' } } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().headers).toEqual({ 'X-Token': { secret: 'site-token' }, 'X-Lit': '***' });
    const row = JSON.stringify((await api.db.pool.query('SELECT headers FROM websites WHERE id = $1', [res.json().id])).rows[0]);
    expect(row).not.toContain('lit-value-1');
    expect(row).not.toContain('tok-site-1');
    const unknown = await api.app.inject({ method: 'POST', url: '/websites', headers: auth, payload: { name: 'S2', base_url: SITE, headers: { 'X-Token': { secret: 'nope' } } } });
    expect(unknown.json().error).toMatchObject({ code: 'UNKNOWN_SECRET', field: 'headers.X-Token' });
  });
});
