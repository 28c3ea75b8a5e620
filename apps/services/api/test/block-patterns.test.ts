/**
 * Block patterns and adaptive throttling through the API: `block_patterns` that a worker could not
 * run (not RE2, a backreference, a lookahead) are 400 with a code naming the pattern, nothing
 * stored or sent; accepted ones, with `adaptive_throttle`, reach the job's spec. The job view's
 * `pages_blocked` counts the job's pages that ended TRAWL_BLOCKED.
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

describe('block_patterns on POST /crawl', () => {
  it.each([
    ['a backreference', ['ok', '(a)\\1'], 'UNSUPPORTED_PATTERN', 'block_patterns.1'],
    ['a lookahead', ['(?=x)y'], 'UNSUPPORTED_PATTERN', 'block_patterns.0'],
    ['no regular expression', ['(unclosed'], 'VALIDATION_FAILED', 'block_patterns.0'],
  ])('refuses %s: 400, nothing stored or sent', async (_name, patterns, code, field) => {
    const { user, auth } = await api.user();
    const before = api.sent.length;
    const res = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth as Record<string, string>, payload: { start_urls: [SITE], depth: 0, block_patterns: patterns } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code, field });
    expect(api.sent.length).toBe(before);
    const stored = await api.db.pool.query('SELECT 1 FROM api_jobs WHERE user_id = $1', [user]);
    expect(stored.rowCount).toBe(0);
  });

  it('refuses them on a website too', async () => {
    const { auth } = await api.user();
    const res = await api.app.inject({ method: 'POST', url: '/websites', headers: auth as Record<string, string>, payload: { name: 'Shop', base_url: SITE, block_patterns: ['(?<=a)b'] } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'UNSUPPORTED_PATTERN' });
  });

  it('passes accepted ones and adaptive_throttle into the job spec', async () => {
    const { auth } = await api.user();
    const before = api.sent.length;
    const res = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth as Record<string, string>, payload: { start_urls: [SITE], depth: 0, block_patterns: ['Access restricted \\(code \\d+\\)'], adaptive_throttle: true } });
    expect(res.statusCode, res.body).toBe(200);
    const dispatched = api.sent.slice(before).find((e) => e.name === 'JobDispatched' && e.body.job_id === res.json().job_id)!;
    expect(dispatched.body.spec).toMatchObject({ block_patterns: ['Access restricted \\(code \\d+\\)'], adaptive_throttle: true });
  });
});
