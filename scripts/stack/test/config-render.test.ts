import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile, repoRoot } from '@trawl/streams';
import { advanceMtimeSecond, clickhouseTemplateValues, clickhouseUrls, clickhouseUserValues, renderTemplate } from '../src/clickhouse.ts';
import { ACCOUNTS, type StackCredentials } from '../src/credentials.ts';
import { createContext } from '../src/context.ts';
import { StaleStateError } from '../src/errors.ts';
import { kafkaLayout, kafkaUp, newClusterId, renderServerProperties } from '../src/kafka.ts';
import { stackLogger } from '../src/logger.ts';
import { renderPgHba } from '../src/postgres-access.ts';
import { renderClusterConf } from '../src/postgres.ts';
import { registryAuthEnv, registryJavaArgs, registryUrl } from '../src/registry.ts';
import { registryTopics } from '../src/registry-storage.ts';

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

describe('a Kafka cluster of three nodes (`up --brokers 3`)', () => {
  const quorum = [19093, 19095, 19097];
  const node2 = parseEnvFile(renderServerProperties({ port: 19094, controllerPort: 19095, dataDir: '/x/kafka/node-2/data', nodeId: 2, quorum }));

  it('runs each node as broker and controller of one static quorum, on its own ports', () => {
    expect(node2).toMatchObject({
      'process.roles': 'broker,controller',
      'node.id': '2',
      'controller.quorum.voters': '1@127.0.0.1:19093,2@127.0.0.1:19095,3@127.0.0.1:19097',
      listeners: 'PLAINTEXT://127.0.0.1:19094,CONTROLLER://127.0.0.1:19095',
      'advertised.listeners': 'PLAINTEXT://127.0.0.1:19094',
      'log.dirs': '/x/kafka/node-2/data',
    });
    expect(node2['controller.quorum.bootstrap.servers']).toBeUndefined();
  });

  it('gives every topic, internal ones too, three copies of which two must hold a write; one node keeps one', () => {
    expect(node2).toMatchObject({
      'default.replication.factor': '3',
      'min.insync.replicas': '2',
      'offsets.topic.replication.factor': '3',
      'transaction.state.log.replication.factor': '3',
      'transaction.state.log.min.isr': '2',
      'share.coordinator.state.topic.replication.factor': '3',
      'share.coordinator.state.topic.min.isr': '2',
    });
    const single = parseEnvFile(renderServerProperties({ port: 19092, controllerPort: 19093, dataDir: '/x/kafka/data' }));
    expect(single['default.replication.factor']).toBeUndefined();
    expect(single['min.insync.replicas']).toBeUndefined();
  });

  it('puts node n on every second port from TRAWL_KAFKA_PORT and TRAWL_KAFKA_CONTROLLER_PORT, under kafka/node-<n>', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-kafka-layout-'));
    try {
      const three = kafkaLayout(createContext({ TRAWL_HOME: home, TRAWL_KAFKA_NODES: '3' }));
      expect(three.nodes.map((n) => [n.id, n.port, n.controllerPort, n.name, n.dir])).toEqual([
        [1, 9092, 9093, 'kafka-1', join(home, 'kafka', 'node-1')],
        [2, 9094, 9095, 'kafka-2', join(home, 'kafka', 'node-2')],
        [3, 9096, 9097, 'kafka-3', join(home, 'kafka', 'node-3')],
      ]);
      // `--brokers` wins over the variable; one node keeps a one-broker stack's layout.
      const one = kafkaLayout(createContext({ TRAWL_HOME: home, TRAWL_KAFKA_NODES: '3' }, { kafkaNodes: 1 }));
      expect(one.nodes.map((n) => [n.port, n.name, n.data, n.log])).toEqual([[9092, 'kafka', join(home, 'kafka', 'data'), join(home, 'logs', 'kafka.log')]]);
      expect(() => createContext({ TRAWL_HOME: home, TRAWL_KAFKA_NODES: '0' })).toThrow(/TRAWL_KAFKA_NODES must be a whole number of brokers from 1 to 9/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('refuses ports the nodes would share, and a log formatted for another number of nodes, before starting anything', async () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-kafka-layout-'));
    const logger = stackLogger({});
    try {
      const clash = createContext({ TRAWL_HOME: home, TRAWL_KAFKA_PORT: '29092', TRAWL_KAFKA_CONTROLLER_PORT: '29094', TRAWL_KAFKA_NODES: '3' });
      await expect(kafkaUp(clash, logger)).rejects.toThrow(/3 Kafka nodes .* would share port 29094/);
      mkdirSync(join(home, 'kafka', 'data'), { recursive: true });
      writeFileSync(join(home, 'kafka', 'data', 'meta.properties'), 'cluster.id=abc\nnode.id=1\n');
      const grown = createContext({ TRAWL_HOME: home, TRAWL_KAFKA_PORT: '29092', TRAWL_KAFKA_CONTROLLER_PORT: '29093' }, { kafkaNodes: 3 });
      await expect(kafkaUp(grown, logger)).rejects.toThrow(StaleStateError);
      await expect(kafkaUp(grown, logger)).rejects.toThrow(/formatted for 1 node\(s\), `up` asks for 3/);
      // Without --brokers, the log's own count: the one node.
      expect(kafkaLayout(createContext({ TRAWL_HOME: home })).nodes).toHaveLength(1);
    } finally {
      rmSync(home, { recursive: true, force: true });
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
    storage: { kind: 'kafkasql', brokers: '127.0.0.1:9092', topics: registryTopics({}) },
  });

  it('store in the log (the stack’s own topics), serve on loopback and hash schemas canonically', () => {
    expect(args).toEqual(
      expect.arrayContaining([
        '-Dquarkus.http.port=18081',
        '-Dquarkus.http.host=127.0.0.1',
        '-Dapicurio.storage.kind=kafkasql',
        '-Dapicurio.kafkasql.bootstrap.servers=127.0.0.1:9092',
        '-Dapicurio.kafkasql.topic=_trawl-registry-journal',
        '-Dapicurio.kafkasql.snapshots.topic=_trawl-registry-snapshots',
        '-Dapicurio.events.kafka.topic=_trawl-registry-events',
        '-Dapicurio.ccompat.use-canonical-hash=true',
        '-Dtrawl.home=/h',
      ]),
    );
    expect(args.slice(-2)).toEqual(['-jar', '/r/app-runner.jar']);
  });

  it('name other topics for another stack on the same Kafka, and refuse a name Kafka would not take', () => {
    expect(registryTopics({ TRAWL_REGISTRY_TOPIC: 'it-7' })).toEqual({ journal: 'it-7-journal', snapshots: 'it-7-snapshots', events: 'it-7-events' });
    expect(() => registryTopics({ TRAWL_REGISTRY_TOPIC: 'a b' })).toThrow(/not a Kafka topic name/);
  });

  it('on the old Postgres storage (only to move its schemas), never carry the database password, which would show in ps', () => {
    const old = registryJavaArgs({ jar: '/r/app-runner.jar', port: 18082, home: '/h', storage: { kind: 'sql', jdbc: { url: 'jdbc:postgresql://127.0.0.1:5433/trawl_registry', username: 'u', password: 'sekret' } } });
    expect(old).toEqual(expect.arrayContaining(['-Dapicurio.storage.kind=sql', '-Dapicurio.datasource.url=jdbc:postgresql://127.0.0.1:5433/trawl_registry']));
    expect(old.join(' ')).not.toContain('sekret');
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
