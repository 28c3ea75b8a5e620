/**
 * The worker will not crawl for tenants with an allow-list that opens the stack's own ports (README,
 * Security; issue 32): `TRAWL_FETCH_ALLOW=127.0.0.0/8`, inherited from a shell, stops it at start
 * with the entry and the ports it covers named, before it connects anywhere. TRAWL_FETCH_ALLOW_STACK=1
 * accepts it on purpose, and the worker says so in its log.
 */
import { endpoints, stackListeners } from '@trawl/streams';
import { runAppAtStart } from '@trawl/streams/testing';
import { describe, expect, it } from 'vitest';

const env = { TRAWL_TOPIC_PREFIX: 'egress-guard-test.' };

describe('the worker at start, given an allow-list that opens the stack', () => {
  it('refuses to start, naming the entry and the stack ports it covers', async () => {
    const { code, log } = await runAppAtStart('worker', { ...env, TRAWL_FETCH_ALLOW: '127.0.0.1:8090,127.0.0.0/8' });
    expect(code, log).toBe(1);
    expect(log).toContain('worker failed to start');
    expect(log).toContain('entry \\"127.0.0.0/8\\" covers');
    const clickhouse = new URL(endpoints().clickhouseUrl);
    expect(log).toContain(`ClickHouse HTTP (CLICKHOUSE_URL) on ${clickhouse.hostname}:${clickhouse.port}`);
    const postgres = stackListeners().find((l) => l.name.startsWith('Postgres'))!;
    expect(log).toContain(`Postgres (DATABASE_URL) on ${postgres.host}:${postgres.ports.from}`);
    expect(log).toContain('TRAWL_FETCH_ALLOW_STACK=1');
    // The demo's own entry opens no stack port and is not named.
    expect(log).not.toContain('entry \\"127.0.0.1:8090\\"');
  }, 90_000);

  it('refuses a host-name entry for every port (localhost) as it refuses the block', async () => {
    const { code, log } = await runAppAtStart('worker', { ...env, TRAWL_FETCH_ALLOW: 'localhost' });
    expect(code, log).toBe(1);
    expect(log).toContain('entry \\"localhost\\" covers');
  }, 90_000);

  it('starts with TRAWL_FETCH_ALLOW_STACK=1, warning what the list opens', async () => {
    const until = 'TRAWL_FETCH_ALLOW opens ports of the stack to crawls (TRAWL_FETCH_ALLOW_STACK=1)';
    const { code, log } = await runAppAtStart('worker', { ...env, TRAWL_FETCH_ALLOW: '127.0.0.0/8', TRAWL_FETCH_ALLOW_STACK: '1' }, { until });
    expect(code, log).toBeNull();
    expect(log).toContain(until);
    expect(log).toContain('entry \\"127.0.0.0/8\\" covers');
    expect(log).not.toContain('failed to start');
  }, 90_000);
});
