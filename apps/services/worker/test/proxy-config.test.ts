/**
 * The operator's proxy settings at the worker's start: a TRAWL_PROXY_URL that is no proxy URL stops
 * the worker before it connects anywhere, saying what is wrong and never echoing the credentials it
 * may carry; a good one is logged as scheme, host and port only.
 */
import { runAppAtStart } from '@trawl/streams/testing';
import { describe, expect, it } from 'vitest';

const env = { TRAWL_TOPIC_PREFIX: 'proxy-config-test.' };

describe('the worker at start, given TRAWL_PROXY_URL', () => {
  it('refuses a URL that is no proxy, without echoing its password', async () => {
    const { code, log } = await runAppAtStart('worker', { ...env, TRAWL_PROXY_URL: 'ftp://ops:hunter2-secret@egress.internal:21' });
    expect(code, log).toBe(1);
    expect(log).toContain('TRAWL_PROXY_URL is not a proxy URL');
    expect(log).not.toContain('hunter2-secret');
  }, 90_000);

  it('logs a good one as scheme, host and port only', async () => {
    const until = 'page processing';
    const { code, log } = await runAppAtStart('worker', { ...env, TRAWL_PROXY_URL: 'http://ops:hunter2-secret@egress.internal:3128', TRAWL_PROXY_BENCH_AFTER: '4' }, { until });
    expect(code, log).toBeNull();
    expect(log).toContain('"operatorDefault":"http://egress.internal:3128"');
    expect(log).toContain('"benchAfter":4');
    expect(log).not.toContain('hunter2-secret');
  }, 90_000);
});
