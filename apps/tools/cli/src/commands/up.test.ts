import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from '../lib/cli-error.ts';
import { checkEgress, demoPort, localFetchAllow, serviceEnv } from './up.ts';

describe('the environment `trawl up` gives services', () => {
  it('opens the demo site’s port on this machine and no other', () => {
    expect(serviceEnv({}).TRAWL_FETCH_ALLOW).toBe('127.0.0.1:8090,[::1]:8090,localhost:8090');
    expect(serviceEnv({ TRAWL_DEMO_PORT: '18090' }).TRAWL_FETCH_ALLOW).toBe('127.0.0.1:18090,[::1]:18090,localhost:18090');
    expect(localFetchAllow({})).not.toMatch(/\/\d+|,localhost(,|$)/);
  });

  it('keeps an explicit TRAWL_FETCH_ALLOW, even an empty one, and the rest of the environment', () => {
    expect(serviceEnv({ TRAWL_FETCH_ALLOW: '10.0.0.0/8:443' }).TRAWL_FETCH_ALLOW).toBe('10.0.0.0/8:443');
    expect(serviceEnv({ TRAWL_FETCH_ALLOW: '' }).TRAWL_FETCH_ALLOW).toBe('');
    expect(serviceEnv({ TRAWL_LOG_LEVEL: 'debug' }).TRAWL_LOG_LEVEL).toBe('debug');
  });

  it('refuses a demo port that is not a TCP port', () => {
    expect(demoPort({})).toBe(8090);
    expect(() => demoPort({ TRAWL_DEMO_PORT: '80901' })).toThrow('TRAWL_DEMO_PORT must be a TCP port (1-65535), got "80901"');
  });
});

describe('the egress check `trawl up` makes before it starts anything', () => {
  // The stack's defaults (no stack.env), and no DNS or interfaces but loopback.
  const home = mkdtempSync(join(tmpdir(), 'trawl-up-egress-'));
  const offline = { local: ['127.0.0.1'], resolve: async () => [] };
  const env = (more: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ TRAWL_HOME: home, ...more });

  it('prints the allow-list the services get, and where it comes from', async () => {
    expect(await checkEgress(env({}), offline)).toEqual({ line: "egress: TRAWL_FETCH_ALLOW=127.0.0.1:8090,[::1]:8090,localhost:8090 (trawl up's default: the demo site's port)", warning: null });
    expect((await checkEgress(env({ TRAWL_FETCH_ALLOW: '10.0.0.0/8:443' }), offline)).line).toBe('egress: TRAWL_FETCH_ALLOW=10.0.0.0/8:443 (from the environment)');
    expect((await checkEgress(env({ TRAWL_FETCH_ALLOW: '' }), offline)).line).toBe('egress: TRAWL_FETCH_ALLOW is empty (from the environment): crawls reach the public internet only');
  });

  it('refuses an inherited list that opens the stack, naming the entry and the ports it covers', async () => {
    const err = await checkEgress(env({ TRAWL_FETCH_ALLOW: '127.0.0.0/8' }), offline).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    const message = (err as Error).message;
    for (const port of ['Postgres (DATABASE_URL) on 127.0.0.1:5432', 'ClickHouse HTTP (CLICKHOUSE_URL) on 127.0.0.1:8123', 'ClickHouse native (TRAWL_CLICKHOUSE_TCP_PORT) on 127.0.0.1:9000', 'Kafka (KAFKA_BROKERS) on 127.0.0.1:9092', 'schema registry (SCHEMA_REGISTRY_URL) on 127.0.0.1:8081', 'S3 (TRAWL_S3_URL) on 127.0.0.1:9100', 'the API and console (TRAWL_API_PORT) on 127.0.0.1:3000', 'the api operator port (TRAWL_API_METRICS_PORT) on 127.0.0.1:9460', 'the worker operator port (TRAWL_WORKER_METRICS_PORT) on 127.0.0.1:9470-9471']) {
      expect(message).toContain(port);
    }
    expect(message).toMatch(/^TRAWL_FETCH_ALLOW opens ports of Trawl's own stack to every tenant's crawls: entry "127\.0\.0\.0\/8" covers /);
    expect(message).toMatch(/TRAWL_FETCH_ALLOW_STACK=1 to open them on purpose\. Nothing was started\.$/);
    // The ports come from configuration: a moved API port is the one named.
    expect((await checkEgress(env({ TRAWL_FETCH_ALLOW: 'localhost:3001', TRAWL_API_PORT: '3001' }), offline).catch((e: Error) => e.message))).toContain('entry "localhost:3001" covers the API and console (TRAWL_API_PORT) on 127.0.0.1:3001');
    await expect(checkEgress(env({ TRAWL_FETCH_ALLOW: 'localhost:3000', TRAWL_API_PORT: '3001' }), offline)).resolves.toMatchObject({ warning: null });
  });

  it('starts with it when TRAWL_FETCH_ALLOW_STACK=1 says so, with a warning naming what it opens', async () => {
    const { warning } = await checkEgress(env({ TRAWL_FETCH_ALLOW: '127.0.0.1:8000-9000', TRAWL_FETCH_ALLOW_STACK: '1' }), offline);
    expect(warning).toBe("TRAWL_FETCH_ALLOW_STACK=1: tenants' crawls may reach the stack itself: entry \"127.0.0.1:8000-9000\" covers schema registry (SCHEMA_REGISTRY_URL) on 127.0.0.1:8081, ClickHouse HTTP (CLICKHOUSE_URL) on 127.0.0.1:8123, ClickHouse native (TRAWL_CLICKHOUSE_TCP_PORT) on 127.0.0.1:9000");
  });
});
