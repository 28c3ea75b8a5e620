/**
 * Against the real local stack (started by `npm test` before the suites; `beforeAll` brings it up
 * when run alone). Nothing here stops a shared part: other suites and people use it.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { authHeaders, createKafka, createLogger, endpoints, httpTarget, topicCatalogue } from '@trawl/streams';
import { stackStatus, stackUp, type StackUpReport } from '../src/index.ts';
import { chromiumVersion } from '../src/chromium.ts';
import { clickhouseQuery } from '../src/clickhouse.ts';
import { REGISTRY_DATABASE } from '../src/postgres.ts';
import { withDatabase } from '../src/database-url.ts';

let first: StackUpReport;

beforeAll(async () => {
  first = await stackUp();
  if (!first.ok) {
    const failed = first.steps.filter((s) => !s.ok).map((s) => (s.ok ? '' : `${s.part}: ${s.error.message}`));
    throw new Error(`the local stack is not up:\n${failed.join('\n')}`);
  }
});

const ep = (): ReturnType<typeof endpoints> => endpoints();

describe('stack status', () => {
  it('reports every part up, with an endpoint, and a pid and memory for running servers', async () => {
    const status = await stackStatus();
    expect(status.parts.map((p) => p.part)).toEqual(['postgres', 'kafka', 'registry', 'clickhouse', 's3', 'chromium', 'topics']);
    for (const p of status.parts) expect({ part: p.part, state: p.state }).toEqual({ part: p.part, state: 'up' });
    expect(status.ok).toBe(true);
    for (const p of status.parts.filter((s) => s.ours)) {
      expect(p.pid).toBeGreaterThan(0);
      expect(p.rssMb).toBeGreaterThan(0);
    }
  });
});

describe('up', () => {
  it('is idempotent: a second call reuses everything and is fast', async () => {
    const again = await stackUp();
    expect(again.ok).toBe(true);
    expect(again.steps.map((s) => s.part).sort()).toEqual(['chromium', 'clickhouse', 'kafka', 'postgres', 'registry', 's3', 'topics']);
    for (const s of again.steps) {
      if (!s.ok) throw s.error;
      expect(s.up.action, s.part).not.toBe('started');
    }
    expect(again.ms).toBeLessThan(5_000);
  });
});

describe('kafka', () => {
  it("holds the catalogue's topics with their partition counts", async () => {
    const admin = createKafka({ clientId: 'stack-test', logger: createLogger('stack-test', { TRAWL_LOG_LEVEL: 'silent' }) }).admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      expect(cluster.brokers.length).toBeGreaterThanOrEqual(1);
      const specs = topicCatalogue();
      const meta = await admin.fetchTopicMetadata({ topics: specs.map((s) => s.name) });
      const partitions = Object.fromEntries(meta.topics.map((t) => [t.name, t.partitions.length]));
      expect(partitions).toEqual(Object.fromEntries(specs.map((s) => [s.name, s.partitions])));
    } finally {
      await admin.disconnect();
    }
  });

  it('lists the broker and the trawl.* topics to an outside client (kcat)', () => {
    const kcat = spawnSync('kcat', ['-b', ep().kafkaBrokers.join(','), '-L', '-m', '10'], { encoding: 'utf8', timeout: 20_000 });
    if (kcat.error) throw new Error(`kcat is not installed (npm run setup installs it): ${kcat.error.message}`);
    expect(kcat.status).toBe(0);
    expect(kcat.stdout).toMatch(/1 brokers:/);
    for (const spec of topicCatalogue()) expect(kcat.stdout).toContain(`topic "${spec.name}" with ${spec.partitions} partitions`);
  });
});

describe('schema registry (Confluent API)', () => {
  const headers = { 'content-type': 'application/vnd.schemaregistry.v1+json' };
  /** fetch refuses URLs with credentials: the registry's go in a header. */
  const registry = (path: string, init: RequestInit = {}): Promise<Response> => {
    const target = httpTarget(ep().schemaRegistryUrl);
    return fetch(`${target.url.replace(/\/+$/, '')}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), ...authHeaders(ep().schemaRegistryUrl) } });
  };
  const record = (fields: object[]): string => JSON.stringify({ type: 'record', name: 'Probe', namespace: 'trawl.stacktest', fields });

  async function register(subject: string, schema: string): Promise<{ status: number; body: { id?: number; error_code?: number } }> {
    const res = await registry(`/subjects/${subject}/versions`, { method: 'POST', headers, body: JSON.stringify({ schema }) });
    return { status: res.status, body: (await res.json()) as { id?: number; error_code?: number } };
  }

  it('has global compatibility BACKWARD', async () => {
    const res = await registry('/config');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { compatibilityLevel: string }).compatibilityLevel).toBe('BACKWARD');
  });

  it('returns the same id for the same schema however it is spelled, a new one for a compatible change, and refuses an incompatible one', async () => {
    const subject = `stack-test-${randomUUID()}`;
    try {
      const v1 = await register(subject, record([{ name: 'url', type: 'string' }]));
      expect(v1.status).toBe(200);
      const again = await register(subject, JSON.stringify(JSON.parse(record([{ type: 'string', name: 'url' }])), null, 2));
      expect(again.body.id).toBe(v1.body.id);

      const compatible = await register(subject, record([{ name: 'url', type: 'string' }, { name: 'depth', type: 'int', default: 0 }]));
      expect(compatible.status).toBe(200);
      expect(compatible.body.id).not.toBe(v1.body.id);

      const incompatible = await register(subject, record([{ name: 'url', type: 'string' }, { name: 'depth', type: 'int', default: 0 }, { name: 'status', type: 'int' }]));
      expect(incompatible.status).toBe(409);

      const byId = await registry(`/schemas/ids/${v1.body.id}`);
      expect(byId.status).toBe(200);
    } finally {
      await registry(`/subjects/${subject}`, { method: 'DELETE' });
      await registry(`/subjects/${subject}?permanent=true`, { method: 'DELETE' });
    }
  });
});

describe('clickhouse', () => {
  it('answers SELECT version() and has the trawl database', async () => {
    const version = await clickhouseQuery(ep().clickhouseUrl, 'SELECT version()');
    expect(version.status).toBe(200);
    expect(version.body.trim()).toMatch(/^\d+\.\d+/);
    const db = await clickhouseQuery(ep().clickhouseUrl, `SELECT count() FROM system.databases WHERE name = '${ep().clickhouseDatabase}'`);
    expect(db.body.trim()).toBe('1');
  });
});

describe('postgres', () => {
  it("answers on DATABASE_URL, and the registry's database exists beside it", async () => {
    const client = new pg.Client({ connectionString: ep().databaseUrl });
    await client.connect();
    try {
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }
    const registry = new pg.Client({ connectionString: withDatabase(ep().databaseUrl, REGISTRY_DATABASE) });
    await registry.connect();
    await registry.end();
  });
});

describe('chromium', () => {
  it('runs --version', async () => {
    const res = await chromiumVersion(ep().chromiumPath);
    expect(res).toMatchObject({ ok: true });
    if (res.ok) expect(res.version).toMatch(/Chrom(e|ium) \d+\./);
  });
});
