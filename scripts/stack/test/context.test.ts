import { describe, expect, it } from 'vitest';
import { ENDPOINT_DEFAULTS } from '@trawl/streams';
import { localEndpoints, resolvePorts, stackChoice, userEndpoint } from '../src/context.ts';

describe('resolvePorts', () => {
  it('uses the documented defaults', () => {
    expect(resolvePorts({})).toEqual({ kafka: 9092, kafkaController: 9093, registry: 8081, clickhouseHttp: 8123, clickhouseTcp: 9000, s3: 9100, postgres: undefined });
  });

  it('takes TRAWL_*_PORT overrides and refuses nonsense', () => {
    expect(resolvePorts({ TRAWL_KAFKA_PORT: '19092', TRAWL_POSTGRES_PORT: '5544' })).toMatchObject({ kafka: 19092, postgres: 5544 });
    expect(() => resolvePorts({ TRAWL_REGISTRY_PORT: 'eighty' })).toThrow(/TRAWL_REGISTRY_PORT must be a TCP port/);
    expect(() => resolvePorts({ TRAWL_CLICKHOUSE_HTTP_PORT: '70000' })).toThrow(/TCP port/);
  });
});

describe('endpoints the stack serves', () => {
  it('are the @trawl/streams defaults on default ports', () => {
    const local = localEndpoints(resolvePorts({}));
    expect(local.KAFKA_BROKERS).toBe(ENDPOINT_DEFAULTS.KAFKA_BROKERS);
    expect(local.SCHEMA_REGISTRY_URL).toBe(ENDPOINT_DEFAULTS.SCHEMA_REGISTRY_URL);
    expect(local.CLICKHOUSE_URL).toBe(ENDPOINT_DEFAULTS.CLICKHOUSE_URL);
  });

  it('go to stack.env only when they differ from the defaults', () => {
    expect(stackChoice('KAFKA_BROKERS', '127.0.0.1:9092')).toEqual({ KAFKA_BROKERS: undefined });
    expect(stackChoice('KAFKA_BROKERS', '127.0.0.1:19092')).toEqual({ KAFKA_BROKERS: '127.0.0.1:19092' });
  });
});

describe('userEndpoint', () => {
  it('is the environment variable the user set: use that, start nothing', () => {
    expect(userEndpoint({ env: { DATABASE_URL: 'postgres://db/x' }, stackEnv: {} }, 'DATABASE_URL')).toBe('postgres://db/x');
  });

  it('is not a value the stack wrote itself and a caller loaded into its environment', () => {
    const url = 'postgres://postgres@127.0.0.1:5433/trawl';
    expect(userEndpoint({ env: { DATABASE_URL: url }, stackEnv: { DATABASE_URL: url } }, 'DATABASE_URL')).toBeUndefined();
  });

  it('treats an empty variable as unset', () => {
    expect(userEndpoint({ env: { KAFKA_BROKERS: '' }, stackEnv: {} }, 'KAFKA_BROKERS')).toBeUndefined();
  });
});
