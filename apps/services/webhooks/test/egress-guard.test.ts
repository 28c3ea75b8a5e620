/**
 * Deliveries obey the crawls' egress rules, so the webhooks service will not start with an
 * allow-list that opens the stack's own ports (README, Security; issue 32): refused before it
 * connects anywhere, the entry and the port named.
 */
import { isIPv4 } from 'node:net';
import { endpoints } from '@trawl/streams';
import { runAppAtStart } from '@trawl/streams/testing';
import { describe, expect, it } from 'vitest';

describe('the webhooks service at start, given an allow-list that opens the stack', () => {
  it('refuses to start, naming the entry and the port it covers', async () => {
    const clickhouse = new URL(endpoints().clickhouseUrl);
    // Its IPv4-mapped spelling: an IPv6 entry that reaches an IPv4 listener all the same.
    const entry = isIPv4(clickhouse.hostname) ? `[::ffff:${clickhouse.hostname}]:${clickhouse.port}` : clickhouse.host;
    const { code, log } = await runAppAtStart('webhooks', { TRAWL_FETCH_ALLOW: entry, TRAWL_TOPIC_PREFIX: 'egress-guard-test.' });
    expect(code, log).toBe(1);
    expect(log).toContain('webhooks failed to start');
    expect(log).toContain(`entry \\"${entry}\\" covers ClickHouse HTTP (CLICKHOUSE_URL) on ${clickhouse.hostname}:${clickhouse.port}.`);
  }, 90_000);
});
