import { describe, expect, it } from 'vitest';
import { parseAllowList } from './allow-list.ts';
import { describeExposures, stackExposures, type KnownAddresses, type StackListener } from './stack-exposure.ts';

/** The local stack as `trawl up` runs it, on its default ports. */
const STACK: StackListener[] = [
  { name: 'Kafka (KAFKA_BROKERS)', host: '127.0.0.1', ports: { from: 9092, to: 9092 } },
  { name: 'Kafka controller (TRAWL_KAFKA_CONTROLLER_PORT)', host: '127.0.0.1', ports: { from: 9093, to: 9093 } },
  { name: 'schema registry (SCHEMA_REGISTRY_URL)', host: '127.0.0.1', ports: { from: 8081, to: 8081 } },
  { name: 'Postgres (DATABASE_URL)', host: '127.0.0.1', ports: { from: 5432, to: 5432 } },
  { name: 'ClickHouse HTTP (CLICKHOUSE_URL)', host: '127.0.0.1', ports: { from: 8123, to: 8123 } },
  { name: 'ClickHouse native (TRAWL_CLICKHOUSE_TCP_PORT)', host: '127.0.0.1', ports: { from: 9000, to: 9000 } },
  { name: 'S3 (TRAWL_S3_URL)', host: '127.0.0.1', ports: { from: 9100, to: 9100 } },
  { name: 'the API and console (TRAWL_API_PORT)', host: '127.0.0.1', ports: { from: 3000, to: 3000 } },
  { name: 'the api operator port (TRAWL_API_METRICS_PORT)', host: '127.0.0.1', ports: { from: 9460, to: 9460 } },
  { name: 'the worker operator port (TRAWL_WORKER_METRICS_PORT)', host: '127.0.0.1', ports: { from: 9470, to: 9471 } },
];

/** `entry → listener@ports` for each exposure, for compact expectations. */
function exposed(allow: string, listeners: readonly StackListener[] = STACK, known: KnownAddresses = {}): string[] {
  return stackExposures(parseAllowList(allow), listeners, known).map((e) => `${e.entry.text} → ${e.listener.name.split(' (')[0]}@${e.ports.from === e.ports.to ? e.ports.from : `${e.ports.from}-${e.ports.to}`}`);
}

describe('which allow-list entries open the stack’s own ports', () => {
  it('finds none in what `trawl up` and the tests set: the demo site’s port, a test server’s, a public block', () => {
    expect(exposed('127.0.0.1:8090,[::1]:8090,localhost:8090')).toEqual([]);
    expect(exposed('127.0.0.1:41234,127.0.0.1:18000-18999')).toEqual([]);
    expect(exposed('10.0.0.0/8:443,192.168.0.0/16,fd00::/8')).toEqual([]);
    expect(exposed('')).toEqual([]);
  });

  it('a bare loopback block covers every port of a listener on 127.0.0.1', () => {
    const all = exposed('127.0.0.0/8');
    expect(all).toHaveLength(STACK.length);
    expect(all).toContain('127.0.0.0/8 → ClickHouse HTTP@8123');
    expect(all).toContain('127.0.0.0/8 → the worker operator port@9470-9471');
    expect(exposed('127.0.0.1')).toHaveLength(STACK.length);
    expect(exposed('0.0.0.0/0')).toHaveLength(STACK.length);
  });

  it('an entry with a port or a range covers only the listeners on it, and says which of their ports', () => {
    expect(exposed('127.0.0.1:8123')).toEqual(['127.0.0.1:8123 → ClickHouse HTTP@8123']);
    expect(exposed('127.0.0.1:9000-9100')).toEqual(['127.0.0.1:9000-9100 → Kafka@9092', '127.0.0.1:9000-9100 → Kafka controller@9093', '127.0.0.1:9000-9100 → ClickHouse native@9000', '127.0.0.1:9000-9100 → S3@9100']);
    expect(exposed('127.0.0.1:9471-9480')).toEqual(['127.0.0.1:9471-9480 → the worker operator port@9471']);
    // Another loopback address is another socket: a listener on 127.0.0.1 does not answer there.
    expect(exposed('127.0.0.2')).toEqual([]);
  });

  it('reaches a loopback listener through the spellings the kernel accepts: 0.0.0.0, IPv4-mapped IPv6', () => {
    expect(exposed('0.0.0.0:5432')).toEqual(['0.0.0.0:5432 → Postgres@5432']);
    expect(exposed('[::ffff:127.0.0.1]:5432')).toEqual(['[::ffff:127.0.0.1]:5432 → Postgres@5432']);
    expect(exposed('::ffff:0:0/96')).toHaveLength(STACK.length);
    // ::1 is not 127.0.0.1: an IPv4 listener does not answer on IPv6 loopback.
    expect(exposed('::1')).toEqual([]);
    expect(exposed('::1', [{ name: 'v6', host: '::1', ports: { from: 1, to: 1 } }])).toEqual(['::1 → v6@1']);
    expect(exposed('[::]:1', [{ name: 'v6', host: '[::1]', ports: { from: 1, to: 1 } }])).toEqual(['[::]:1 → v6@1']);
  });

  it('a host-name entry covers what the name resolves to, localhost by default to loopback', () => {
    expect(exposed('localhost')).toHaveLength(STACK.length);
    expect(exposed('localhost:3000')).toEqual(['localhost:3000 → the API and console@3000']);
    expect(exposed('dev.localhost:8081')).toEqual(['dev.localhost:8081 → schema registry@8081']);
    const known = { names: new Map([['box.internal', ['127.0.0.1']], ['elsewhere.internal', ['10.1.2.3']]]) };
    expect(exposed('box.internal:9092', STACK, known)).toEqual(['box.internal:9092 → Kafka@9092']);
    expect(exposed('elsewhere.internal', STACK, known)).toEqual([]);
    // A name nobody could resolve covers nothing it does not name.
    expect(exposed('unknown.internal')).toEqual([]);
  });

  it('a listener configured by name is covered by that name and by blocks holding its addresses', () => {
    const remote: StackListener[] = [{ name: 'Postgres (DATABASE_URL)', host: 'db.internal', ports: { from: 5432, to: 5432 } }];
    const known = { names: new Map([['db.internal', ['10.20.30.40']]]) };
    expect(exposed('db.internal', remote, known)).toEqual(['db.internal → Postgres@5432']);
    expect(exposed('DB.Internal.:5432', remote)).toEqual(['DB.Internal.:5432 → Postgres@5432']);
    expect(exposed('10.0.0.0/8', remote, known)).toEqual(['10.0.0.0/8 → Postgres@5432']);
    expect(exposed('10.0.0.0/8', remote)).toEqual([]);
    expect(exposed('10.0.0.0/8:443', remote, known)).toEqual([]);
  });

  it('a listener on every address answers on all of loopback and on the machine’s own addresses', () => {
    const wide: StackListener[] = [{ name: 'the api operator port (TRAWL_API_METRICS_PORT)', host: '0.0.0.0', ports: { from: 9460, to: 9460 } }];
    const known = { local: ['127.0.0.1', '10.9.8.7', 'fe80::1'] };
    expect(exposed('127.0.0.2', wide, known)).toEqual(['127.0.0.2 → the api operator port@9460']);
    expect(exposed('10.0.0.0/8', wide, known)).toEqual(['10.0.0.0/8 → the api operator port@9460']);
    expect(exposed('10.0.0.0/8', wide)).toEqual([]);
    expect(exposed('192.168.0.0/16', wide, known)).toEqual([]);
    const dual: StackListener[] = [{ name: 'dual', host: '::', ports: { from: 1, to: 1 } }];
    expect(exposed('127.0.0.5', dual, known)).toEqual(['127.0.0.5 → dual@1']);
    expect(exposed('fe80::/10', dual, known)).toEqual(['fe80::/10 → dual@1']);
  });

  it('names each entry once, with every listener and port it covers', () => {
    const text = describeExposures(stackExposures(parseAllowList('127.0.0.1:8090,127.0.0.1:8000-8999,localhost:9092'), STACK));
    expect(text).toBe('entry "127.0.0.1:8000-8999" covers schema registry (SCHEMA_REGISTRY_URL) on 127.0.0.1:8081, ClickHouse HTTP (CLICKHOUSE_URL) on 127.0.0.1:8123; entry "localhost:9092" covers Kafka (KAFKA_BROKERS) on 127.0.0.1:9092');
    expect(describeExposures(stackExposures(parseAllowList('::1'), [{ name: 'v6', host: '::1', ports: { from: 1, to: 9 } }]))).toBe('entry "::1" covers v6 on [::1]:1-9');
  });
});
