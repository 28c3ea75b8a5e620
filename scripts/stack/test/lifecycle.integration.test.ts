/**
 * A second, private stack under its own TRAWL_HOME, whose Kafka, registry and Postgres are the
 * shared stack's given through environment variables (so "external"), and whose ClickHouse runs
 * on free ports, with the stack's generated users. It proves, without disturbing the shared stack: user endpoints are used and not
 * started, non-default choices land in stack.env, concurrent `up`s start a part once, and `down`
 * stops only what `up` started.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints } from '@trawl/streams';
import { stackDown, stackStatus, stackUp, type UpStep } from '../src/index.ts';
import { tcpOpen } from '../src/probe.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

const home = mkdtempSync(join(tmpdir(), 'trawl-stack-test-'));
let env: NodeJS.ProcessEnv;
let httpPort: number;

function action(steps: readonly UpStep[], part: string): string {
  const s = steps.find((x) => x.part === part);
  if (!s) throw new Error(`no step for ${part}`);
  if (!s.ok) throw s.error;
  return s.up.action;
}

beforeAll(async () => {
  const shared = await stackUp();
  expect(shared.ok).toBe(true);
  const ep = endpoints();
  httpPort = await freePort();
  env = {
    ...process.env,
    TRAWL_HOME: home,
    KAFKA_BROKERS: ep.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: ep.schemaRegistryUrl,
    DATABASE_URL: ep.databaseUrl,
    TRAWL_S3_URL: ep.s3Url,
    CLICKHOUSE_URL: '',
    TRAWL_CLICKHOUSE_HTTP_PORT: String(httpPort),
    TRAWL_CLICKHOUSE_TCP_PORT: String(await freePort()),
  };
});

afterAll(async () => {
  await stackDown({ env });
  rmSync(home, { recursive: true, force: true });
});

describe('a stack with external endpoints and its own ClickHouse', () => {
  it('starts only what is not given, once, even when two `up`s race', async () => {
    const [a, b] = await Promise.all([stackUp({ env }), stackUp({ env })]);
    expect(a.ok && b.ok).toBe(true);
    for (const part of ['kafka', 'registry', 'postgres', 's3']) {
      expect(action(a.steps, part), part).toBe('external');
      expect(action(b.steps, part), part).toBe('external');
    }
    expect([action(a.steps, 'clickhouse'), action(b.steps, 'clickhouse')].sort()).toEqual(['reused', 'started']);
  });

  it('writes its non-default ClickHouse to stack.env, with the writer’s and the reader’s credentials, where endpoints() finds it', () => {
    const withoutUrl = { ...env, CLICKHOUSE_URL: undefined, CLICKHOUSE_READ_URL: undefined };
    const writer = new URL(endpoints(withoutUrl).clickhouseUrl);
    const reader = new URL(endpoints(withoutUrl).clickhouseReadUrl);
    expect([writer.host, writer.username, writer.password.length > 20]).toEqual([`127.0.0.1:${httpPort}`, 'trawl', true]);
    expect([reader.host, reader.username, reader.password.length > 20]).toEqual([`127.0.0.1:${httpPort}`, 'trawl_reader', true]);
  });

  it('reports its own ClickHouse with pid and memory', async () => {
    const status = await stackStatus({ env });
    expect(status.ok).toBe(true);
    const ch = status.parts.find((p) => p.part === 'clickhouse');
    expect(ch).toMatchObject({ state: 'up', ours: true, endpoint: `http://trawl:***@127.0.0.1:${httpPort}` });
    expect(ch?.rssMb).toBeGreaterThan(0);
  });

  it('`down` stops its ClickHouse and leaves the shared parts running', async () => {
    const steps = await stackDown({ env });
    const byPart = Object.fromEntries(steps.map((s) => [s.part, s.action]));
    expect(byPart).toMatchObject({ clickhouse: 'stopped', kafka: 'not-ours', registry: 'not-ours', postgres: 'not-ours' });
    expect(await tcpOpen('127.0.0.1', httpPort)).toBe(false);
    expect(existsSync(join(home, 'run', 'clickhouse.pid'))).toBe(false);
    expect((await stackStatus()).ok).toBe(true);
  });
});
