/**
 * The API stores webhook secrets sealed with TRAWL_SECRETS_KEY (@trawl/store/secrets): it does not
 * start without the key (issue 32, item 7), before it connects anywhere, saying how to get one.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAppAtStart } from '@trawl/streams/testing';

describe('the API at start, without the key of secrets at rest', () => {
  it('refuses to start, naming TRAWL_SECRETS_KEY and how to make one', async () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-no-key-'));
    const { code, log } = await runAppAtStart('api', { TRAWL_HOME: home, TRAWL_SECRETS_KEY: '', TRAWL_SECRETS_OLD_KEYS: '', TRAWL_FETCH_ALLOW: '' });
    expect(code, log).toBe(1);
    expect(log).toContain('api failed to start');
    expect(log).toContain('TRAWL_SECRETS_KEY is not set: the API keeps webhook secrets encrypted with it and does not start without it');
    expect(log).toContain('openssl rand -base64 32');
  }, 90_000);
});
