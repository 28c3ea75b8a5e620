import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stackListeners } from './stack-listeners.ts';

/** `name host:ports` per listener. */
const show = (env: NodeJS.ProcessEnv) =>
  stackListeners(env).map((l) => `${l.name} ${l.host}:${l.ports.from === l.ports.to ? l.ports.from : `${l.ports.from}-${l.ports.to}`}`);

describe('the ports the stack and the services listen on', () => {
  it('are the local stack’s defaults when nothing is configured', () => {
    expect(show({ TRAWL_HOME: mkdtempSync(join(tmpdir(), 'trawl-listeners-')) })).toEqual([
      'Kafka (KAFKA_BROKERS) 127.0.0.1:9092',
      'Kafka controller (TRAWL_KAFKA_CONTROLLER_PORT) 127.0.0.1:9093',
      'schema registry (SCHEMA_REGISTRY_URL) 127.0.0.1:8081',
      'Postgres (DATABASE_URL) 127.0.0.1:5432',
      'ClickHouse HTTP (CLICKHOUSE_URL) 127.0.0.1:8123',
      'ClickHouse native (TRAWL_CLICKHOUSE_TCP_PORT) 127.0.0.1:9000',
      'S3 (TRAWL_S3_URL) 127.0.0.1:9100',
      'the API and console (TRAWL_API_PORT) 127.0.0.1:3000',
      'the api operator port (TRAWL_API_METRICS_PORT) 127.0.0.1:9460',
      'the projector-pg operator port (TRAWL_PROJECTOR_PG_METRICS_PORT) 127.0.0.1:9461',
      'the projector-ch operator port (TRAWL_PROJECTOR_CH_METRICS_PORT) 127.0.0.1:9462',
      'the dispatcher operator port (TRAWL_DISPATCHER_METRICS_PORT) 127.0.0.1:9463',
      'the frontier operator port (TRAWL_FRONTIER_METRICS_PORT) 127.0.0.1:9464',
      'the webhooks operator port (TRAWL_WEBHOOKS_METRICS_PORT) 127.0.0.1:9465',
      'the worker operator port (TRAWL_WORKER_METRICS_PORT) 127.0.0.1:9470-9471',
    ]);
  });

  it('follow the environment and the stack’s own choices (stack.env), credentials and sockets included', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-listeners-'));
    writeFileSync(join(home, 'stack.env'), 'DATABASE_URL=postgres://trawl:secret@127.0.0.1:5433/trawl\nCLICKHOUSE_READ_URL=http://reader:pw@127.0.0.1:8123\n');
    const env = {
      TRAWL_HOME: home,
      KAFKA_BROKERS: '10.0.0.5:19092,[::1]:19093',
      SCHEMA_REGISTRY_URL: 'https://registry.internal/apis/ccompat/v7',
      TRAWL_CLICKHOUSE_TCP_PORT: '19000',
      TRAWL_S3_URL: 'http://key:secret@s3.internal:9100',
      TRAWL_API_HOST: '0.0.0.0',
      TRAWL_API_PORT: '3001',
      TRAWL_METRICS_HOST: '0.0.0.0',
      TRAWL_DISPATCHER_METRICS_PORT: '0',
      TRAWL_FRONTIER_METRICS_PORT: '19464',
      TRAWL_WORKERS: '4',
    };
    const all = show(env);
    expect(all).toContain('Kafka (KAFKA_BROKERS) 10.0.0.5:19092');
    expect(all).toContain('Kafka (KAFKA_BROKERS) [::1]:19093');
    expect(all).toContain('Kafka controller (TRAWL_KAFKA_CONTROLLER_PORT) [::1]:9093');
    expect(all).toContain('schema registry (SCHEMA_REGISTRY_URL) registry.internal:443');
    expect(all).toContain('Postgres (DATABASE_URL) 127.0.0.1:5433');
    expect(all).toContain('ClickHouse native (TRAWL_CLICKHOUSE_TCP_PORT) 127.0.0.1:19000');
    expect(all).toContain('S3 (TRAWL_S3_URL) s3.internal:9100');
    expect(all).toContain('the API and console (TRAWL_API_PORT) 0.0.0.0:3001');
    expect(all).toContain('the frontier operator port (TRAWL_FRONTIER_METRICS_PORT) 0.0.0.0:19464');
    expect(all).toContain('the worker operator port (TRAWL_WORKER_METRICS_PORT) 0.0.0.0:9470-9473');
    // Off (0): no port. The read URL on the writer's server: listed once.
    expect(all.filter((l) => l.includes('dispatcher'))).toEqual([]);
    expect(all.filter((l) => l.includes('ClickHouse HTTP'))).toEqual(['ClickHouse HTTP (CLICKHOUSE_URL) 127.0.0.1:8123']);
    expect(all.join('\n')).not.toContain('secret');
    // A Unix-socket DATABASE_URL: its server's TCP port on this machine.
    expect(show({ TRAWL_HOME: home, DATABASE_URL: 'postgres:///trawl?host=/run/postgresql' })).toContain('Postgres (DATABASE_URL) localhost:5432');
    // One worker port set for all: that one.
    expect(show({ TRAWL_HOME: home, TRAWL_WORKER_METRICS_PORT: '29470' })).toContain('the worker operator port (TRAWL_WORKER_METRICS_PORT) 127.0.0.1:29470');
  });

  it('cover every controller of a local three-broker cluster (`stack up --brokers 3`)', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-listeners-'));
    const kafka = show({ TRAWL_HOME: home, KAFKA_BROKERS: '127.0.0.1:9092,127.0.0.1:9094,127.0.0.1:9096' }).filter((l) => l.startsWith('Kafka'));
    expect(kafka).toEqual([
      'Kafka (KAFKA_BROKERS) 127.0.0.1:9092',
      'Kafka (KAFKA_BROKERS) 127.0.0.1:9094',
      'Kafka (KAFKA_BROKERS) 127.0.0.1:9096',
      'Kafka controller (TRAWL_KAFKA_CONTROLLER_PORT) 127.0.0.1:9093-9097',
    ]);
  });
});
