/**
 * Bad input never yields a 500: each case answers a 4xx with the error shape and a catalogue code.
 * Random input on every route: fuzz-input.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
let auth: { authorization: string };
beforeAll(async () => {
  api = await startTestApi({ config: { bodyLimit: 16 * 1024 } });
  ({ auth } = await api.user());
});
afterAll(async () => {
  await api?.close();
});

const ok = { start_urls: ['http://127.0.0.1:8090/'], depth: 1 };

async function post(payload: string | object, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await api.app.inject({
    method: 'POST',
    url: '/crawl',
    headers: { ...auth, ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, res.body).toBeLessThan(500);
  const body = res.json();
  expect(ERROR_CODES).toContain(body.error.code);
  expect(typeof body.error.message).toBe('string');
  return { status: res.statusCode, error: body.error as { code: string; message: string; field?: string } };
}

describe('POST /crawl refuses bad input with a clear 4xx', () => {
  it.each([
    ['malformed JSON', '{"start_urls": ["http://a.test/"], "depth": 1', 'INVALID_JSON'],
    ['an empty body', '', 'INVALID_JSON'],
    ['a JSON array', '[1,2]', 'VALIDATION_FAILED'],
    ['a JSON string', '"crawl"', 'VALIDATION_FAILED'],
    ['null', 'null', 'VALIDATION_FAILED'],
  ])('%s', async (_name, body, code) => {
    expect((await post(body)).error.code).toBe(code);
  });

  it.each([
    ['depth as a string', { ...ok, depth: '3' }, 'depth'],
    ['negative depth', { ...ok, depth: -1 }, 'depth'],
    ['depth above 10', { ...ok, depth: 11 }, 'depth'],
    ['fractional depth', { ...ok, depth: 1.5 }, 'depth'],
    ['missing depth', { start_urls: ok.start_urls }, 'depth'],
    ['missing start_urls', { depth: 1 }, 'start_urls'],
    ['start_urls as a string', { ...ok, start_urls: 'http://a.test/' }, 'start_urls'],
    ['empty start_urls', { ...ok, start_urls: [] }, 'start_urls'],
    ['an ftp URL', { ...ok, start_urls: ['ftp://a.test/file'] }, 'start_urls.0'],
    ['a javascript: URL', { ...ok, start_urls: ['javascript:alert(1)'] }, 'start_urls.0'],
    ['a file: URL', { ...ok, start_urls: ['http://a.test/', 'file:///etc/passwd'] }, 'start_urls.1'],
    ['a relative URL', { ...ok, start_urls: ['/jobs'] }, 'start_urls.0'],
    ['not a URL', { ...ok, start_urls: ['not a url'] }, 'start_urls.0'],
    ['a number as URL', { ...ok, start_urls: [42] }, 'start_urls.0'],
    ['max_pages 0', { ...ok, max_pages: 0 }, 'max_pages'],
    ['max_pages too big', { ...ok, max_pages: 100_001 }, 'max_pages'],
    ['an unknown field', { ...ok, priority: 'high' }, 'priority'],
    ['a misspelt field', { ...ok, start_url: ['http://a.test/'] }, 'start_url'],
    ['an empty field name', { ...ok, '': 1 }, ''],
    ['a NUL character (Postgres cannot store it)', { ...ok, params: { q: 'a\u0000b' } }, 'params.q'],
    ['a NUL character in a key', { ...ok, params: { 'a\u0000': 'b' } }, 'params.a\u0000'],
    ['schedule_at not a date', { ...ok, schedule_at: 'tomorrow' }, 'schedule_at'],
    ['ignore_cache as a string', { ...ok, ignore_cache: 'yes' }, 'ignore_cache'],
    ['params with a number value', { ...ok, params: { page: 2 } }, 'params.page'],
    ['a spider id with a slash', { ...ok, spider: '../etc' }, 'spider'],
  ])('%s → VALIDATION_FAILED', async (_name, payload, field) => {
    const { status, error } = await post(payload);
    expect(status).toBe(400);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.field).toBe(field);
  });

  it.each(['every day', '* * *', '99 * * * *', '* * * * * * *', 'L W # ?'])('invalid cron %j → INVALID_CRON', async (interval) => {
    expect((await post({ ...ok, interval })).error).toMatchObject({ code: 'INVALID_CRON', field: 'interval' });
  });

  it('a huge body → 413 BODY_TOO_LARGE', async () => {
    const huge = { ...ok, params: { blob: 'x'.repeat(20 * 1024) } };
    expect(await post(huge)).toMatchObject({ status: 413, error: { code: 'BODY_TOO_LARGE' } });
  });

  it('a non-JSON content type → 415', async () => {
    expect(await post('start_urls=x', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({
      status: 415,
      error: { code: 'UNSUPPORTED_MEDIA_TYPE' },
    });
  });

  it('prototype poisoning → 400', async () => {
    const { status } = await post('{"start_urls":["http://a.test/"],"depth":1,"__proto__":{"admin":true}}');
    expect(status).toBe(400);
  });
});

describe('other endpoints refuse bad input with 4xx', () => {
  it.each([
    ['GET', '/jobs/not-a-uuid/status', 400],
    ['GET', '/jobs?limit=0', 400],
    ['GET', '/jobs?limit=abc', 400],
    ['GET', '/jobs?status=sleeping', 400],
    ['GET', '/jobs?cursor=%%%', 400],
    ['GET', '/jobs?cursor=bm9wZQ', 400],
    ['GET', '/jobs?since=yesterday', 400],
    ['GET', '/jobs/00000000-0000-4000-8000-000000000000/items?format=xml', 400],
    ['GET', '/no/such/route', 404],
    ['POST', '/jobs/00000000-0000-4000-8000-000000000000/cancel', 404],
    ['GET', '/schedules/has%20space', 400],
    ['GET', '/jobs/%/status', 400],
    ['GET', `/websites/${'a'.repeat(201)}`, 400],
  ])('%s %s → %i', async (method, url, status) => {
    const res = await api.app.inject({ method: method as 'GET', url, headers: auth });
    expect(res.statusCode, res.body).toBe(status);
    expect(ERROR_CODES).toContain(res.json().error.code);
  });
});
