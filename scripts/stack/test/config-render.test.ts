import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile, repoRoot } from '@trawl/streams';
import { advanceMtimeSecond, clickhouseTemplateValues, clickhouseUrls, clickhouseUserValues, renderTemplate } from '../src/clickhouse.ts';
import { ACCOUNTS, type StackCredentials } from '../src/credentials.ts';
import { newClusterId, renderServerProperties } from '../src/kafka.ts';
import { renderPgHba } from '../src/postgres-access.ts';
import { renderClusterConf } from '../src/postgres.ts';
import { registryAuthEnv, registryJavaArgs, registryUrl } from '../src/registry.ts';

describe('Kafka server.properties', () => {
  const props = parseEnvFile(renderServerProperties({ port: 19092, controllerPort: 19093, dataDir: '/x/kafka/data' }));

  it('runs one node as broker and controller on the configured ports', () => {
    expect(props).toMatchObject({
      'process.roles': 'broker,controller',
      'node.id': '1',
      'controller.quorum.bootstrap.servers': '127.0.0.1:19093',
      listeners: 'PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093',
      'advertised.listeners': 'PLAINTEXT://127.0.0.1:19092',
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': '/x/kafka/data',
    });
  });

  it('lets internal topics live with one replica and never creates topics by accident', () => {
    expect(props).toMatchObject({
      'offsets.topic.replication.factor': '1',
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'auto.create.topics.enable': 'false',
      'group.initial.rebalance.delay.ms': '0',
    });
  });

  it('makes cluster ids the way StorageTool random-uuid does', () => {
    for (let i = 0; i < 200; i++) {
      const id = newClusterId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    }
  });
});

describe('ClickHouse users.xml rewrites', () => {
  // ClickHouse compares modification times in whole seconds: two writes in one second look like one.
  it('move the file to a later second than the version before, so the server reloads it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-mtime-'));
    try {
      const file = join(dir, 'users.xml');
      writeFileSync(file, 'new');
      const nowSecond = Math.floor(Date.now() / 1000);
      advanceMtimeSecond(file, nowSecond * 1000 + 900);
      expect(Math.floor(statSync(file).mtimeMs / 1000)).toBe(nowSecond + 1);

      utimesSync(file, nowSecond + 5, nowSecond + 5);
      advanceMtimeSecond(file, (nowSecond - 10) * 1000);
      expect(Math.floor(statSync(file).mtimeMs / 1000)).toBe(nowSecond + 5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ClickHouse config template', () => {
  const template = readFileSync(join(repoRoot, 'infra', 'clickhouse', 'config.xml'), 'utf8');
  const values = clickhouseTemplateValues({ dir: '/h/clickhouse', logDir: '/h/logs', httpPort: 18123, tcpPort: 19000 });
  const xml = renderTemplate(template, values);

  it('fills every placeholder of infra/clickhouse/config.xml', () => {
    expect(xml).not.toMatch(/\{\{/);
    expect(xml).toContain('<http_port>18123</http_port>');
    expect(xml).toContain('<tcp_port>19000</tcp_port>');
    expect(xml).toContain('<path>/h/clickhouse/data/</path>');
    expect(xml).toContain('<log>/h/logs/clickhouse.log</log>');
    expect(xml).toContain('<errorlog>/h/logs/clickhouse.err.log</errorlog>');
  });

  it('listens on loopback only, with no interserver port and small caches', () => {
    expect(xml).toContain('<listen_host>127.0.0.1</listen_host>');
    expect(xml).not.toMatch(/<interserver_http_port>/);
    const mark = Number(/<mark_cache_size>(\d+)<\/mark_cache_size>/.exec(xml)?.[1]);
    expect(mark).toBeLessThanOrEqual(256 * 1024 * 1024);
  });

  it('escapes paths for XML', () => {
    const odd = renderTemplate(template, clickhouseTemplateValues({ dir: '/a&b/<c>', logDir: '/l', httpPort: 1, tcpPort: 2 }));
    expect(odd).toContain('<path>/a&amp;b/&lt;c&gt;/data/</path>');
  });

  it('treats a missing or an unused value as a bug', () => {
    expect(() => renderTemplate('{{A}} {{B}}', { A: 1 })).toThrow(/\{\{B\}\} has no value/);
    expect(() => renderTemplate('{{A}}', { A: 1, C: 2 })).toThrow(/no placeholder for C/);
  });

  it('renders users.xml: every user needs its password (as SHA-256), from loopback only; the reader is readonly=2', () => {
    const creds = { TRAWL_CLICKHOUSE_ADMIN_PASSWORD: 'admin-pw', TRAWL_CLICKHOUSE_PASSWORD: 'writer-pw', TRAWL_CLICKHOUSE_READER_PASSWORD: 'reader-pw' } as StackCredentials;
    const users = renderTemplate(readFileSync(join(repoRoot, 'infra', 'clickhouse', 'users.xml'), 'utf8'), clickhouseUserValues(creds));
    const user = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(users.slice(users.indexOf('<users>')))?.[1] ?? '';
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(user('default')).toContain(`<password_sha256_hex>${sha('admin-pw')}</password_sha256_hex>`);
    expect(user(ACCOUNTS.clickhouseWriter)).toContain(`<password_sha256_hex>${sha('writer-pw')}</password_sha256_hex>`);
    expect(user(ACCOUNTS.clickhouseReader)).toContain(`<password_sha256_hex>${sha('reader-pw')}</password_sha256_hex>`);
    expect(user(ACCOUNTS.clickhouseReader)).toContain('<profile>reader</profile>');
    expect(users).toMatch(/<reader>\s*<readonly>2<\/readonly>/);
    for (const name of ['default', ACCOUNTS.clickhouseWriter, ACCOUNTS.clickhouseReader]) {
      expect(user(name)).toMatch(/<networks>\s*<ip>::1<\/ip>\s*<ip>127\.0\.0\.1<\/ip>\s*<\/networks>/);
      expect(user(name)).not.toMatch(/<password>/);
    }
    expect(users).not.toMatch(/admin-pw|writer-pw|reader-pw/);
  });

  it('hands services the writer and the reader as URLs with their credentials', () => {
    const creds = { TRAWL_CLICKHOUSE_PASSWORD: 'w1', TRAWL_CLICKHOUSE_READER_PASSWORD: 'r1' } as StackCredentials;
    expect(clickhouseUrls('http://127.0.0.1:18123', creds)).toEqual({ CLICKHOUSE_URL: 'http://trawl:w1@127.0.0.1:18123', CLICKHOUSE_READ_URL: 'http://trawl_reader:r1@127.0.0.1:18123' });
  });
});

describe('Postgres private cluster settings', () => {
  it('listen on loopback TCP only, on the chosen port', () => {
    const conf = renderClusterConf(5433);
    expect(conf).toContain("listen_addresses = '127.0.0.1'");
    expect(conf).toContain('port = 5433');
    expect(conf).toContain("unix_socket_directories = ''");
    expect(conf).toContain("password_encryption = 'scram-sha-256'");
  });

  it('ask every connection for a SCRAM password (pg_hba.conf)', () => {
    const rules = renderPgHba()
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.split(/\s+/));
    expect(rules).toEqual([
      ['host', 'all', 'all', '127.0.0.1/32', 'scram-sha-256'],
      ['host', 'all', 'all', '::1/128', 'scram-sha-256'],
    ]);
  });
});

describe('registry JVM arguments', () => {
  const args = registryJavaArgs({
    jar: '/r/app-runner.jar',
    port: 18081,
    home: '/h',
    jdbc: { url: 'jdbc:postgresql://127.0.0.1:5433/trawl_registry', username: 'u', password: 'sekret' },
  });

  it('store in Postgres, serve on loopback and hash schemas canonically', () => {
    expect(args).toEqual(
      expect.arrayContaining([
        '-Dquarkus.http.port=18081',
        '-Dquarkus.http.host=127.0.0.1',
        '-Dapicurio.storage.kind=sql',
        '-Dapicurio.storage.sql.kind=postgresql',
        '-Dapicurio.datasource.url=jdbc:postgresql://127.0.0.1:5433/trawl_registry',
        '-Dapicurio.ccompat.use-canonical-hash=true',
        '-Dtrawl.home=/h',
      ]),
    );
    expect(args.slice(-2)).toEqual(['-jar', '/r/app-runner.jar']);
  });

  it('never carry the database password, which would show in ps', () => {
    expect(args.join(' ')).not.toContain('sekret');
  });

  it('require Basic authentication everywhere but /health, the user and its password in the environment only', () => {
    expect(args).toEqual(
      expect.arrayContaining([
        '-Dquarkus.security.users.embedded.enabled=true',
        '-Dquarkus.http.auth.basic=true',
        '-Dquarkus.http.auth.permission.everything.paths=/*',
        '-Dquarkus.http.auth.permission.everything.policy=authenticated',
        '-Dquarkus.http.auth.permission.health.paths=/health/*',
        '-Dquarkus.http.auth.permission.health.policy=permit',
      ]),
    );
    const creds = { TRAWL_REGISTRY_PASSWORD: 'reg-pw' } as StackCredentials;
    expect(registryAuthEnv(creds)).toEqual({ QUARKUS_SECURITY_USERS_EMBEDDED_USERS_TRAWL: 'reg-pw', QUARKUS_SECURITY_USERS_EMBEDDED_ROLES_TRAWL: 'sr-admin' });
    expect(registryUrl('http://127.0.0.1:18081/apis/ccompat/v7', creds)).toBe('http://trawl:reg-pw@127.0.0.1:18081/apis/ccompat/v7');
  });
});
