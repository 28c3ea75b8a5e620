/**
 * Chaos (`npm run test:chaos` only: about a minute): the schema registry keeps its schemas in the
 * log. A stack under a temporary TRAWL_HOME with a private Postgres and its own registry (journal
 * topics of its own on the shared broker; ClickHouse and S3 the shared ones):
 *
 * - a registry that kept its schemas in Postgres, as the stack ran it before, has them moved into
 *   the log by the next `up`, every id answering the same schema as before;
 * - SIGKILLed, and started again with its Postgres stopped, it answers every id from the log, and a
 *   new schema gets the next id.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, createLogger, endpoints, parseEnvFile, repoRoot } from '@trawl/streams';
import { findRegistryJar, jdbcFromDatabaseUrl, loadCredentials, registryAuthEnv, registryJavaArgs, registryTopics, stackDown, stackUp, type UpStep } from '@trawl/stack';
import { freePort } from '../../src/api-pipeline.ts';
import { report } from './support.ts';

const home = mkdtempSync(join(tmpdir(), 'trawl-registry-log-'));
// As root the private cluster runs as `postgres`, which must reach its directory inside.
chmodSync(home, 0o711);
const topic = `_trawl-test-registry-${randomBytes(4).toString('hex')}`;
const topics = registryTopics({ TRAWL_REGISTRY_TOPIC: topic });
const logger = createLogger('registry-log-test', { ...process.env, TRAWL_LOG_LEVEL: process.env.TRAWL_LOG_LEVEL ?? 'silent' });
const figures: Record<string, unknown> = {};
let env: NodeJS.ProcessEnv;
let registryPort: number;
let auth: string;

const SCHEMAS = ['Alpha', 'Beta', 'Gamma'].map((name) => JSON.stringify({ type: 'record', name, namespace: 'dev.trawl.test', fields: [{ name: 'x', type: 'string' }] }));

function step(steps: readonly UpStep[], part: string): UpStep {
  const s = steps.find((x) => x.part === part);
  if (!s) throw new Error(`no step for ${part}`);
  return s;
}

async function ccompat(port: number, path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${port}/apis/ccompat/v7${path}`, {
    ...init,
    headers: { authorization: auth, 'content-type': 'application/vnd.schemaregistry.v1+json', ...(init.headers as Record<string, string> | undefined) },
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

const register = async (port: number, subject: string, schema: string) => (await ccompat(port, `/subjects/${subject}/versions`, { method: 'POST', body: JSON.stringify({ schema }) })).body as { id: number };
const schemaOf = async (port: number, id: number) => ((await ccompat(port, `/schemas/ids/${id}`)).body as { schema?: string } | null)?.schema;

beforeAll(async () => {
  const shared = endpoints();
  registryPort = await freePort();
  env = {
    ...process.env,
    TRAWL_HOME: home,
    KAFKA_BROKERS: shared.kafkaBrokers.join(','),
    CLICKHOUSE_URL: shared.clickhouseUrl,
    CLICKHOUSE_READ_URL: shared.clickhouseReadUrl,
    TRAWL_S3_URL: shared.s3Url,
    SCHEMA_REGISTRY_URL: '',
    DATABASE_URL: '',
    TRAWL_POSTGRES_PRIVATE: '1',
    TRAWL_POSTGRES_PORT: String(await freePort()),
    TRAWL_REGISTRY_PORT: String(registryPort),
    TRAWL_REGISTRY_TOPIC: topic,
  };
}, 60_000);

afterAll(async () => {
  report('registry in the log', figures);
  if (env) await stackDown({ env });
  rmSync(home, { recursive: true, force: true });
  const admin = createKafka({ clientId: 'registry-log-test', logger }).admin();
  await admin.connect();
  await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
  await admin.disconnect();
}, 120_000);

describe('the schema registry keeps its schemas in the log', () => {
  const before = new Map<number, string>();

  it('moves the schemas a registry kept in Postgres into the log, every id answering the same schema', async () => {
    // The stack's Postgres (the shared registry named, so this stack starts none yet).
    const first = await stackUp({ env: { ...env, SCHEMA_REGISTRY_URL: endpoints().schemaRegistryUrl } });
    expect(step(first.steps, 'postgres').ok).toBe(true);
    expect(step(first.steps, 'registry').ok).toBe(true);

    // What a stack of before ran: the registry on Postgres, its schemas there.
    const stackEnv = parseEnvFile(readFileSync(join(home, 'stack.env'), 'utf8'));
    const creds = loadCredentials(home, env);
    auth = `Basic ${Buffer.from(`trawl:${creds.TRAWL_REGISTRY_PASSWORD}`).toString('base64')}`;
    const jdbc = jdbcFromDatabaseUrl(stackEnv.DATABASE_URL!, 'trawl_registry');
    const oldPort = await freePort();
    const old = spawn('java', registryJavaArgs({ jar: findRegistryJar(repoRoot)!, port: oldPort, home: '/nowhere', storage: { kind: 'sql', jdbc } }), {
      env: { ...process.env, APICURIO_DATASOURCE_USERNAME: jdbc.username, APICURIO_DATASOURCE_PASSWORD: jdbc.password, ...registryAuthEnv(creds) },
      stdio: 'ignore',
    });
    try {
      await expect.poll(async () => (await fetch(`http://127.0.0.1:${oldPort}/health/ready`).catch(() => null))?.status, { timeout: 120_000, interval: 500 }).toBe(200);
      for (const [i, schema] of SCHEMAS.entries()) before.set((await register(oldPort, `legacy-${i}-value`, schema)).id, schema);
    } finally {
      old.kill('SIGTERM');
      await new Promise((r) => old.once('exit', r));
    }

    const started = performance.now();
    const moved = await stackUp({ env });
    const registry = step(moved.steps, 'registry');
    if (!registry.ok) throw registry.error;
    figures.moveMs = Math.round(performance.now() - started);
    expect(registry.up.note).toMatch(/moved 3 schemas from Postgres into the log/);
    for (const [id, schema] of before) expect(await schemaOf(registryPort, id), `id ${id}`).toBe(schema);
    expect(readFileSync(join(home, 'registry', 'storage'), 'utf8').trim()).toBe('kafkasql');
    // Recorded in the old database too: a new TRAWL_HOME on this Postgres moves nothing again.
    const oldDb = new URL(stackEnv.DATABASE_URL!);
    oldDb.pathname = '/trawl_registry';
    const db = new pg.Client({ connectionString: oldDb.toString() });
    await db.connect();
    try {
      expect((await db.query<{ journal: string }>('SELECT journal FROM trawl_moved_to_log')).rows).toEqual([{ journal: topics.journal }]);
    } finally {
      await db.end();
    }

    // Kept forever: Apicurio would make its journal with the broker's 7-day default.
    const check = createKafka({ clientId: 'registry-log-test', logger }).admin();
    await check.connect();
    const described = await check.describeConfigs({ includeSynonyms: false, resources: [topics.journal, topics.snapshots].map((name) => ({ type: 2, name })) });
    await check.disconnect();
    for (const r of described.resources) expect(r.configEntries.find((e) => e.configName === 'retention.ms')?.configValue, r.resourceName).toBe('-1');
  }, 360_000);

  it('SIGKILLed and started again with its Postgres stopped, answers every id from the log, and numbers a new schema next', async () => {
    const pid = Number(readFileSync(join(home, 'run', 'registry.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    await stackDown({ env }); // Postgres stopped (the registry is gone already)
    const started = performance.now();
    // Postgres named on a port where nothing listens: its step fails, the registry's must not.
    const again = await stackUp({ env: { ...env, DATABASE_URL: `postgres://trawl:x@127.0.0.1:${await freePort()}/trawl` } });
    expect(step(again.steps, 'postgres').ok).toBe(false);
    const registry = step(again.steps, 'registry');
    if (!registry.ok) throw registry.error;
    figures.restartWithoutPostgresMs = Math.round(performance.now() - started);
    for (const [id, schema] of before) expect(await schemaOf(registryPort, id), `id ${id}`).toBe(schema);
    const next = await register(registryPort, 'after-restart-value', JSON.stringify({ type: 'record', name: 'Delta', namespace: 'dev.trawl.test', fields: [{ name: 'y', type: 'long' }] }));
    expect(next.id).toBe(Math.max(...before.keys()) + 1);
  }, 240_000);
});
