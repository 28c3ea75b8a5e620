/**
 * The API checks webhook URLs against the crawls' egress rules, so it will not start with an
 * allow-list that opens the stack's own ports — its own port included, wherever configuration puts
 * it (README, Security; issue 32). Refused before it connects anywhere, the entry and port named.
 */
import { runAppAtStart } from '@trawl/streams/testing';
import { describe, expect, it } from 'vitest';

describe('the API at start, given an allow-list that opens the stack', () => {
  it('refuses to start, naming the entry and the API port it covers', async () => {
    const { code, log } = await runAppAtStart('api', { TRAWL_FETCH_ALLOW: '127.0.0.1:8090,127.0.0.1:3400-3499', TRAWL_API_PORT: '3456' });
    expect(code, log).toBe(1);
    expect(log).toContain('api failed to start');
    expect(log).toContain('entry \\"127.0.0.1:3400-3499\\" covers the API and console (TRAWL_API_PORT) on 127.0.0.1:3456.');
    expect(log).not.toContain('api listening');
  }, 90_000);
});
