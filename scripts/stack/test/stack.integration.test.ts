/**
 * Against the real local stack (started by `npm test` before the suites; `beforeAll` brings it up
 * when run alone). Nothing here stops a shared part: other suites and people use it.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { authHeaders, createKafka, createLogger, endpoints, httpTarget, topicCatalogue, trawlHome } from '@trawl/streams';
import { stackStatus, stackUp, type StackUpReport } from '../src/index.ts';
import { chromiumVersion } from '../src/chromium.ts';
import { clickhouseQuery } from '../src/clickhouse.ts';
import { REGISTRY_DATABASE } from '../src/postgres.ts';
import { parseDatabaseUrl, withDatabase } from '../src/database-url.ts';

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

describe('postgres by default', () => {
  // What issue 32 found: the stack adopted Debian's server on 5432, which lets anyone on the
  // machine in as any role. Unless adoption is asked for (or DATABASE_URL names a server), the
  // stack's own cluster serves, and it lets no one in without a password.
  it.skipIf(Boolean(process.env.DATABASE_URL) || Boolean(process.env.TRAWL_POSTGRES_ADOPT_TRUSTING))('is the private cluster, which asks every connection for a password, and `up` says why', async () => {
    const step = first.steps.find((s) => s.part === 'postgres');
    expect(step?.ok).toBe(true);
    if (!step?.ok) return;
    expect(['started', 'reused']).toContain(step.up.action);
    expect(step.up.note).toMatch(/^private cluster on \d+, scram-sha-256/);
    const { port } = parseDatabaseUrl(ep().databaseUrl);
    expect(step.up.note).toContain(`private cluster on ${port}`);
    const status = (await stackStatus()).parts.find((p) => p.part === 'postgres');
    expect(status).toMatchObject({ state: 'up', ours: true });
    for (const user of ['postgres', 'trawl']) {
      const client = new pg.Client({ connectionString: `postgres://${user}@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 3_000 });
      client.on('error', () => undefined);
      await expect(client.connect()).rejects.toThrow(/password/);
      await client.end().catch(() => undefined);
    }
    // Where Debian's server lets `postgres` in on 5432, the line says that is why it was passed over.
    const trusting = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres', connectionTimeoutMillis: 3_000 });
    trusting.on('error', () => undefined);
    const answers = await trusting.connect().then(() => true, () => false);
    await trusting.end().catch(() => undefined);
    if (answers) expect(step.up.note).toMatch(/not the server on 5432: it lets `postgres` in without a password.*TRAWL_POSTGRES_ADOPT_TRUSTING=1/);
  });
});

describe('state under TRAWL_HOME', () => {
  // Issue 32: Kafka's log was 0644 in 0755 directories, readable by any local user.
  const home = trawlHome();
  const PART_DIRS = ['kafka', 'clickhouse', 's3', 'registry', 'postgres', 'logs', 'run'];
  const CREDENTIAL_FILES = ['credentials.env', 'stack.env', 's3/s3proxy.conf', 'clickhouse/users.xml'];
  /** Tooling the setup script keeps there (Node, built bundles, stamps): no part's data. */
  const TOOLING = new Set(['node', 'build', 'setup']);

  it("keeps every part's directory 0700 and every file holding a credential 0600", () => {
    const mode = (p: string) => statSync(p).mode & 0o777;
    const dirs = PART_DIRS.filter((d) => existsSync(join(home, d)));
    expect(dirs).toEqual(expect.arrayContaining(['kafka', 'logs', 'run']));
    for (const d of dirs) expect({ dir: d, mode: mode(join(home, d)).toString(8) }).toEqual({ dir: d, mode: '700' });
    for (const f of CREDENTIAL_FILES.filter((c) => existsSync(join(home, c)))) expect({ file: f, mode: mode(join(home, f)).toString(8) }).toEqual({ file: f, mode: '600' });
  });

  it('holds nothing another local user can read: walked from TRAWL_HOME, no path is open to group or others all the way down', () => {
    const open: string[] = [];
    // A path is reachable by others when every directory above it lets them pass (x for group or
    // others); it is exposed when, reachable, it can be read.
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (dir === home && TOOLING.has(name)) continue;
        const st = lstatSync(path);
        if (st.isSymbolicLink()) continue;
        if ((st.mode & 0o044) !== 0 && !(dir === home && st.isDirectory())) open.push(`${relative(home, path)} ${(st.mode & 0o777).toString(8)}`);
        if (st.isDirectory() && (st.mode & 0o011) !== 0) walk(path);
      }
    };
    walk(home);
    expect(open).toEqual([]);
  });
});

describe('chromium', () => {
  it('runs --version', async () => {
    const res = await chromiumVersion(ep().chromiumPath);
    expect(res).toMatchObject({ ok: true });
    if (res.ok) expect(res.version).toMatch(/Chrom(e|ium) \d+\./);
  });
});
