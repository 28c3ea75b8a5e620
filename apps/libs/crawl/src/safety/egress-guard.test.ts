import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../errors.ts';
import { egressPolicyFromEnv, stackPortsAllowed } from './egress-guard.ts';
import type { StackListener } from './stack-exposure.ts';

const STACK: StackListener[] = [
  { name: 'Postgres (DATABASE_URL)', host: '127.0.0.1', ports: { from: 5432, to: 5432 } },
  { name: 'ClickHouse HTTP (CLICKHOUSE_URL)', host: 'localhost', ports: { from: 8123, to: 8123 } },
  { name: 'the worker operator port (TRAWL_WORKER_METRICS_PORT)', host: '127.0.0.1', ports: { from: 9470, to: 9471 } },
];

/** No DNS, no interfaces: the names a test gives, nothing else. */
const offline = (names: Record<string, string[]> = {}) => ({ local: [], resolve: async (name: string) => names[name] ?? [] });

describe('the egress policy a fetching service starts with', () => {
  it('is TRAWL_FETCH_ALLOW as is when it opens no port of the stack', async () => {
    const { policy, exposures } = await egressPolicyFromEnv(STACK, { TRAWL_FETCH_ALLOW: '127.0.0.1:8090,localhost:8090' }, offline());
    expect(exposures).toEqual([]);
    expect(policy.blockedReason('127.0.0.1', 8090)).toBeNull();
    expect(policy.blockedReason('127.0.0.1', 5432)).not.toBeNull();
  });

  it('refuses one that does, naming each entry and the ports it covers, and the way to accept it', async () => {
    const err = await egressPolicyFromEnv(STACK, { TRAWL_FETCH_ALLOW: '127.0.0.1:8090,127.0.0.0/8,localhost:8123' }, offline()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidConfigError);
    expect((err as Error).message).toBe(
      "TRAWL_FETCH_ALLOW opens ports of Trawl's own stack to every tenant's crawls: " +
        'entry "127.0.0.0/8" covers Postgres (DATABASE_URL) on 127.0.0.1:5432, ClickHouse HTTP (CLICKHOUSE_URL) on localhost:8123, the worker operator port (TRAWL_WORKER_METRICS_PORT) on 127.0.0.1:9470-9471; ' +
        'entry "localhost:8123" covers ClickHouse HTTP (CLICKHOUSE_URL) on localhost:8123. ' +
        'Narrow each entry to the ports crawls need (127.0.0.1:8090 rather than 127.0.0.0/8 or localhost), or set TRAWL_FETCH_ALLOW_STACK=1 to open them on purpose.',
    );
  });

  it('resolves host-name entries: a name for this machine is as open as loopback', async () => {
    const err = await egressPolicyFromEnv(STACK, { TRAWL_FETCH_ALLOW: 'box.internal:9471' }, offline({ 'box.internal': ['127.0.0.1'] })).catch((e: unknown) => e);
    expect((err as Error).message).toContain('entry "box.internal:9471" covers the worker operator port (TRAWL_WORKER_METRICS_PORT) on 127.0.0.1:9471.');
    // A name that does not resolve (or not in time) opens nothing of the stack.
    const slow = { local: [], resolveTimeoutMs: 50, resolve: () => new Promise<string[]>(() => undefined) };
    await expect(egressPolicyFromEnv(STACK, { TRAWL_FETCH_ALLOW: 'box.internal' }, slow)).resolves.toMatchObject({ exposures: [] });
  });

  it('accepts it with TRAWL_FETCH_ALLOW_STACK=1, returning what it opens for the caller to log', async () => {
    const { policy, exposures } = await egressPolicyFromEnv(STACK, { TRAWL_FETCH_ALLOW: '127.0.0.0/8', TRAWL_FETCH_ALLOW_STACK: '1' }, offline());
    expect(exposures.map((e) => e.listener.name)).toEqual(STACK.map((l) => l.name));
    expect(policy.blockedReason('127.0.0.1', 5432)).toBeNull();
    expect(stackPortsAllowed({ TRAWL_FETCH_ALLOW_STACK: 'true' })).toBe(true);
    for (const v of [undefined, '', '0', 'false', 'yes']) expect(stackPortsAllowed({ TRAWL_FETCH_ALLOW_STACK: v })).toBe(false);
  });

  it('resolves nothing for an empty list, and still refuses a malformed entry first', async () => {
    let lookups = 0;
    const counting = { local: [], resolve: async () => (lookups++, []) };
    await expect(egressPolicyFromEnv(STACK, {}, counting)).resolves.toMatchObject({ exposures: [] });
    expect(lookups).toBe(0);
    await expect(egressPolicyFromEnv(STACK, { TRAWL_FETCH_ALLOW: '127.0.0.1:99999', TRAWL_FETCH_ALLOW_STACK: '1' }, counting)).rejects.toThrow('TRAWL_FETCH_ALLOW entry "127.0.0.1:99999": port 99999 is not in 1-65535');
  });
});
