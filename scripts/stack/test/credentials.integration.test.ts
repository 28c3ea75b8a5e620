/**
 * A second stack with credentials, under its own TRAWL_HOME and on free ports, with a private
 * Postgres, its own ClickHouse and registry (Kafka is the shared broker, given as external): every
 * part asks for the password the stack generated, services get URLs that carry theirs, no report
 * shows one, and a stack made before there were passwords is secured in place by the next `up`.
 * The shared stack is not touched; `down` stops this one.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, createLogger, endpoints, parseEnvFile } from '@trawl/streams';
import { formatStatusTable, formatUpStep, stackDown, stackStatus, stackUp } from '../src/index.ts';
import { clickhouseQuery } from '../src/clickhouse.ts';
import { credentialsFile, type StackCredentials } from '../src/credentials.ts';
import { query } from '../src/pg-client.ts';
import { registryTopics } from '../src/registry-storage.ts';
import { http } from '../src/probe.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

const home = mkdtempSync(join(tmpdir(), 'trawl-stack-creds-'));
const registryTopic = `_trawl-test-registry-${randomBytes(4).toString('hex')}`;
// As root the private cluster runs as `postgres`, which must reach its directory inside.
chmodSync(home, 0o711);
let env: NodeJS.ProcessEnv;
let ports: { pg: number; ch: number; chTcp: number; registry: number; s3: number };
let creds: StackCredentials;
let stackEnv: Record<string, string>;
const printed: string[] = [];

const mode = (file: string) => statSync(file).mode & 0o777;
const pgAs = (user: string, password: string, database = 'postgres') => `postgres://${user}:${password}@127.0.0.1:${ports.pg}/${database}`;
const chAs = (user: string, password: string) => `http://${user}:${password}@127.0.0.1:${ports.ch}`;

async function up(): Promise<void> {
  const report = await stackUp({ env, onStep: (s) => printed.push(formatUpStep(s)) });
  for (const s of report.steps) if (!s.ok) throw s.error;
  creds = parseEnvFile(readFileSync(credentialsFile(home), 'utf8')) as unknown as StackCredentials;
  stackEnv = parseEnvFile(readFileSync(join(home, 'stack.env'), 'utf8'));
}

beforeAll(async () => {
  ports = { pg: await freePort(), ch: await freePort(), chTcp: await freePort(), registry: await freePort(), s3: await freePort() };
  env = {
    ...process.env,
    TRAWL_HOME: home,
    KAFKA_BROKERS: endpoints().kafkaBrokers.join(','),
    DATABASE_URL: '',
    CLICKHOUSE_URL: '',
    CLICKHOUSE_READ_URL: '',
    SCHEMA_REGISTRY_URL: '',
    TRAWL_POSTGRES_PRIVATE: '1',
    TRAWL_POSTGRES_PORT: String(ports.pg),
    TRAWL_CLICKHOUSE_HTTP_PORT: String(ports.ch),
    TRAWL_CLICKHOUSE_TCP_PORT: String(ports.chTcp),
    TRAWL_REGISTRY_PORT: String(ports.registry),
    // Its registry keeps its schemas in topics of its own on the shared broker.
    TRAWL_REGISTRY_TOPIC: registryTopic,
    TRAWL_S3_URL: '',
    TRAWL_S3_PORT: String(ports.s3),
  };
  await up();
}, 240_000);

afterAll(async () => {
  await stackDown({ env });
  rmSync(home, { recursive: true, force: true });
  const admin = createKafka({ clientId: 'trawl-stack-test', logger: createLogger('test') }).admin();
  await admin.connect();
  await admin.deleteTopics({ topics: Object.values(registryTopics({ TRAWL_REGISTRY_TOPIC: registryTopic })) }).catch(() => undefined);
  await admin.disconnect();
}, 120_000);

describe('a stack with credentials', () => {
  it('keeps its passwords and the services’ URLs in TRAWL_HOME, readable by their owner only', () => {
    expect(mode(credentialsFile(home))).toBe(0o600);
    expect(mode(join(home, 'stack.env'))).toBe(0o600);
    expect(mode(join(home, 'clickhouse', 'users.xml'))).toBe(0o600);
    expect(stackEnv).toMatchObject({
      DATABASE_URL: pgAs('trawl', creds.TRAWL_POSTGRES_PASSWORD, 'trawl'),
      CLICKHOUSE_URL: chAs('trawl', creds.TRAWL_CLICKHOUSE_PASSWORD),
      CLICKHOUSE_READ_URL: chAs('trawl_reader', creds.TRAWL_CLICKHOUSE_READER_PASSWORD),
      SCHEMA_REGISTRY_URL: `http://trawl:${creds.TRAWL_REGISTRY_PASSWORD}@127.0.0.1:${ports.registry}/apis/ccompat/v7`,
    });
  });

  it('Postgres: every connection needs its password; services use a role that owns the project’s databases and is no superuser', async () => {
    await expect(query(`postgres://postgres@127.0.0.1:${ports.pg}/postgres`, 'SELECT 1')).rejects.toThrow(/password/);
    await expect(query(pgAs('trawl', 'wrong-password'), 'SELECT 1')).rejects.toThrow(/password authentication failed/);
    const { rows } = await query(stackEnv.DATABASE_URL!, "SELECT rolsuper, rolcreatedb, (SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE pg_get_userbyid(datdba) = current_user) AS owns FROM pg_roles WHERE rolname = current_user");
    expect(rows[0]).toEqual({ rolsuper: false, rolcreatedb: true, owns: 'trawl,trawl_registry' });
  });

  it('ClickHouse: the default user needs its password, the reader reads and cannot write, the writer writes', async () => {
    expect((await clickhouseQuery(`http://127.0.0.1:${ports.ch}`, 'SELECT 1')).body).toMatch(/Password required for user default|password is incorrect/i);
    expect((await clickhouseQuery(chAs('default', creds.TRAWL_CLICKHOUSE_ADMIN_PASSWORD), 'SELECT 1')).body.trim()).toBe('1');
    const writer = stackEnv.CLICKHOUSE_URL!;
    const reader = stackEnv.CLICKHOUSE_READ_URL!;
    expect((await clickhouseQuery(writer, 'CREATE TABLE IF NOT EXISTS trawl.victim (x UInt8) ENGINE = Memory')).status).toBe(200);
    expect((await clickhouseQuery(reader, 'SELECT count() FROM trawl.victim')).body.trim()).toBe('0');
    for (const sql of ['DROP TABLE trawl.victim', 'DROP DATABASE trawl', 'INSERT INTO trawl.victim VALUES (1)', 'SET readonly = 0']) {
      expect((await clickhouseQuery(reader, sql)).body, sql).toMatch(/readonly/i);
    }
    expect((await clickhouseQuery(`${reader}/?readonly=0`, 'DROP TABLE trawl.victim')).body).toMatch(/readonly/i);
    expect((await clickhouseQuery(writer, 'EXISTS TABLE trawl.victim')).body.trim()).toBe('1');
  });

  it('the registry answers only with its password, its health checks without', async () => {
    expect((await http(`http://127.0.0.1:${ports.registry}/apis/ccompat/v7/subjects`)).status).toBe(401);
    expect((await http(`http://trawl:wrong@127.0.0.1:${ports.registry}/apis/ccompat/v7/subjects`)).status).toBe(401);
    expect((await http(`${stackEnv.SCHEMA_REGISTRY_URL}/subjects`)).status).toBe(200);
    expect((await http(`http://127.0.0.1:${ports.registry}/health/ready`)).status).toBe(200);
  });

  it('shows no password in what `up` and `status` print', async () => {
    printed.push(formatStatusTable((await stackStatus({ env })).parts));
    const text = printed.join('\n');
    for (const secret of Object.values(creds)) expect(text).not.toContain(secret);
    expect(text).toContain(`postgres://trawl:***@127.0.0.1:${ports.pg}/trawl`);
  });

  it('secures a stack made before it had passwords: trusted Postgres, password-less ClickHouse', async () => {
    // Back to what the stack made before: trust for every connection, a superuser without a
    // password, objects made by postgres, and ClickHouse's default user without a password.
    const admin = pgAs('postgres', creds.TRAWL_POSTGRES_ADMIN_PASSWORD);
    const data = join(home, 'postgres', 'data');
    writeFileSync(join(data, 'pg_hba.conf'), 'host all all 127.0.0.1/32 trust\n');
    await query(admin, 'SELECT pg_reload_conf()');
    await query(`postgres://postgres@127.0.0.1:${ports.pg}/postgres`, 'ALTER ROLE postgres PASSWORD NULL');
    await query(`postgres://postgres@127.0.0.1:${ports.pg}/postgres`, 'ALTER DATABASE trawl OWNER TO postgres');
    await query(`postgres://postgres@127.0.0.1:${ports.pg}/trawl`, 'CREATE TABLE legacy (id serial PRIMARY KEY)');
    const usersXml = join(home, 'clickhouse', 'users.xml');
    writeFileSync(usersXml, readFileSync(usersXml, 'utf8').replace(/<default>\s*<password_sha256_hex>[0-9a-f]+<\/password_sha256_hex>/, '<default><password></password>'));
    await expect.poll(async () => (await clickhouseQuery(`http://127.0.0.1:${ports.ch}`, 'SELECT 1')).body.trim(), { timeout: 20_000, interval: 500 }).toBe('1');

    await up();

    await expect(query(`postgres://postgres@127.0.0.1:${ports.pg}/postgres`, 'SELECT 1')).rejects.toThrow(/password/);
    const { rows } = await query(stackEnv.DATABASE_URL!, "SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname IN ('legacy', 'legacy_id_seq') ORDER BY relname");
    expect(rows).toEqual([{ owner: 'trawl' }, { owner: 'trawl' }]);
    await query(stackEnv.DATABASE_URL!, 'ALTER TABLE legacy ADD COLUMN IF NOT EXISTS note text');
    expect((await clickhouseQuery(`http://127.0.0.1:${ports.ch}`, 'SELECT 1')).body).toMatch(/Password required for user default|password is incorrect/i);
  }, 120_000);
});
