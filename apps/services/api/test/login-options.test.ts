/**
 * Sessions and a login through the API (`sessions`, `login` on POST /crawl): a login that cannot
 * run is 400 with a code naming the field, nothing stored or sent and no credential echoed; an
 * accepted one reaches the job's spec with its pool size and its field values sealed.
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

const SITE = 'http://members.example/';
const PASSWORD = 'login-PASS-never-echoed';
const login = { kind: 'form', url: `${SITE}login`, form_selector: 'form#login', fields: { username: 'ada', password: PASSWORD }, success_selector: '.member' };

async function post(auth: object, payload: object) {
  return api.app.inject({ method: 'POST', url: '/crawl', headers: auth as Record<string, string>, payload });
}

describe('POST /crawl with a login', () => {
  it.each([
    ['no sessions', { login }, 'LOGIN_NEEDS_SESSIONS', 'sessions'],
    ['no success rule', { sessions: 2, login: { ...login, success_selector: undefined } }, 'INVALID_LOGIN', 'login'],
    ['a success pattern RE2 does not run', { sessions: 2, login: { ...login, success_url_pattern: '(a)\\1' } }, 'UNSUPPORTED_PATTERN', 'login.success_url_pattern'],
    ['a form selector that is no selector', { sessions: 2, login: { ...login, form_selector: 'form[' } }, 'INVALID_LOGIN', 'login.form_selector'],
  ])('refuses %s: 400 with its code, nothing stored or sent', async (_name, options, code, field) => {
    const { user, auth } = await api.user();
    const before = api.sent.length;
    const res = await post(auth, { start_urls: [SITE], depth: 1, ...options });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code, field });
    expect(res.body).not.toContain(PASSWORD);
    expect(api.sent.length).toBe(before);
    const stored = await api.db.pool.query('SELECT 1 FROM api_jobs WHERE user_id = $1 UNION ALL SELECT 1 FROM crawl_dedupe WHERE user_id = $1', [user]);
    expect(stored.rowCount).toBe(0);
  });

  it('reaches the job spec with its pool and its fields sealed', async () => {
    const { auth } = await api.user();
    const res = await post(auth, { start_urls: [SITE], depth: 1, sessions: 3, login });
    expect(res.statusCode, res.body).toBe(200);
    const dispatched = api.sent.find((e) => e.name === 'JobDispatched' && e.body.job_id === res.json().job_id)!;
    const spec = dispatched.body.spec as { sessions: number; login: { kind: string; fields: Record<string, string> } };
    expect(spec.sessions).toBe(3);
    expect(spec.login.kind).toBe('form');
    expect(spec.login.fields.password).toMatch(/^tsec1\./);
    expect(JSON.stringify(api.sent)).not.toContain(PASSWORD);
  });
});
