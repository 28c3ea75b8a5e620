/**
 * Where the stack keeps its state and which ports it uses, resolved once per command from the
 * environment. Pure apart from reading TRAWL_HOME/stack.env, so it is unit-tested directly.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINT_DEFAULTS, LISTENER_PORT_DEFAULTS, parseEnvFile, repoRoot, stackEnvFile, trawlHome, type EndpointVariable } from '@trawl/streams';

export interface StackPorts {
  readonly kafka: number;
  readonly kafkaController: number;
  readonly registry: number;
  readonly clickhouseHttp: number;
  readonly clickhouseTcp: number;
  /** S3Proxy; not 9000, which is ClickHouse's native port. */
  readonly s3: number;
  /** Port of a private Postgres cluster when forced; otherwise 5432 if free, else 5433. */
  readonly postgres: number | undefined;
}

export interface StackContext {
  readonly repoRoot: string;
  /** TRAWL_HOME: every pid, log and data directory lives below it. */
  readonly home: string;
  readonly runDir: string;
  readonly logDir: string;
  readonly env: NodeJS.ProcessEnv;
  /** What the last `up` wrote to TRAWL_HOME/stack.env. */
  readonly stackEnv: Readonly<Record<string, string>>;
  readonly ports: StackPorts;
  /** Run a private Postgres cluster even when TRAWL_POSTGRES_ADOPT_TRUSTING asks to adopt a server. */
  readonly privatePostgres: boolean;
  /**
   * TRAWL_POSTGRES_ADOPT_TRUSTING=1: use the server on 127.0.0.1:5432 that lets `postgres` in
   * without a password, as the stack did before it ran a private cluster by default. Such a
   * server lets any local user in as any role: off unless asked (postgres.ts).
   */
  readonly adoptTrustingPostgres: boolean;
  /**
   * Kafka nodes asked for (`up --brokers N`, TRAWL_KAFKA_NODES); undefined: as the log under
   * TRAWL_HOME/kafka was formatted, one for a new one (kafka.ts).
   */
  readonly kafkaNodes: number | undefined;
}

/** The most Kafka nodes the stack runs on one machine. */
export const MAX_KAFKA_NODES = 9;

function kafkaNodes(raw: string | number | undefined, from: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_KAFKA_NODES) throw new Error(`${from} must be a whole number of brokers from 1 to ${MAX_KAFKA_NODES}, got "${raw}"`);
  return n;
}

export const PORT_DEFAULTS = {
  TRAWL_KAFKA_PORT: 9092,
  // These two from @trawl/streams, where the egress guard reads them too (no endpoint URL carries them).
  TRAWL_KAFKA_CONTROLLER_PORT: LISTENER_PORT_DEFAULTS.TRAWL_KAFKA_CONTROLLER_PORT,
  TRAWL_REGISTRY_PORT: 8081,
  TRAWL_CLICKHOUSE_HTTP_PORT: 8123,
  TRAWL_CLICKHOUSE_TCP_PORT: LISTENER_PORT_DEFAULTS.TRAWL_CLICKHOUSE_TCP_PORT,
  TRAWL_S3_PORT: 9100,
} as const;

function port(env: NodeJS.ProcessEnv, name: string, dflt: number | undefined): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${name} must be a TCP port (1-65535), got "${raw}"`);
  return n;
}

export function resolvePorts(env: NodeJS.ProcessEnv): StackPorts {
  const p = (name: keyof typeof PORT_DEFAULTS): number => port(env, name, PORT_DEFAULTS[name])!;
  return {
    kafka: p('TRAWL_KAFKA_PORT'),
    kafkaController: p('TRAWL_KAFKA_CONTROLLER_PORT'),
    registry: p('TRAWL_REGISTRY_PORT'),
    clickhouseHttp: p('TRAWL_CLICKHOUSE_HTTP_PORT'),
    clickhouseTcp: p('TRAWL_CLICKHOUSE_TCP_PORT'),
    s3: p('TRAWL_S3_PORT'),
    postgres: port(env, 'TRAWL_POSTGRES_PORT', undefined),
  };
}

export interface ContextOptions {
  /** `--brokers N`: wins over TRAWL_KAFKA_NODES. */
  readonly kafkaNodes?: number;
}

export function createContext(env: NodeJS.ProcessEnv = process.env, opts: ContextOptions = {}): StackContext {
  const home = trawlHome(env);
  const file = stackEnvFile(env);
  const stackEnv = existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {};
  const on = (name: string): boolean => ['1', 'true', 'yes'].includes((env[name] ?? '').toLowerCase());
  return {
    repoRoot,
    home,
    runDir: join(home, 'run'),
    logDir: join(home, 'logs'),
    env,
    stackEnv,
    ports: resolvePorts(env),
    privatePostgres: on('TRAWL_POSTGRES_PRIVATE') || Boolean(env.TRAWL_POSTGRES_PORT),
    adoptTrustingPostgres: on('TRAWL_POSTGRES_ADOPT_TRUSTING'),
    kafkaNodes: opts.kafkaNodes !== undefined ? kafkaNodes(opts.kafkaNodes, '--brokers') : kafkaNodes(env.TRAWL_KAFKA_NODES, 'TRAWL_KAFKA_NODES'),
  };
}

/**
 * The value of an endpoint variable when the user set it, which means "use that, start nothing".
 * A value equal to what the stack itself wrote to stack.env is not the user's: a caller that loaded
 * stack.env into its environment (as the `trawl` CLI may) must not turn the stack's own private
 * Postgres into an "external" one that `up` would then never restart.
 */
export function userEndpoint(ctx: Pick<StackContext, 'env' | 'stackEnv'>, name: EndpointVariable): string | undefined {
  const v = ctx.env[name];
  if (!v) return undefined;
  if (ctx.stackEnv[name] === v) return undefined;
  return v;
}

/** The URL the stack serves a part on, from its port; the defaults come from @trawl/streams. */
export function localEndpoints(ports: StackPorts): Record<'KAFKA_BROKERS' | 'SCHEMA_REGISTRY_URL' | 'CLICKHOUSE_URL', string> {
  return {
    KAFKA_BROKERS: `127.0.0.1:${ports.kafka}`,
    SCHEMA_REGISTRY_URL: `http://127.0.0.1:${ports.registry}/apis/ccompat/v7`,
    CLICKHOUSE_URL: `http://127.0.0.1:${ports.clickhouseHttp}`,
  };
}

/**
 * A part's entry for stack.env: the value when it differs from the default, `undefined` (drop the
 * line) when it is the default: stack.env holds only the stack's non-default choices.
 */
export function stackChoice(name: EndpointVariable, value: string): Record<string, string | undefined> {
  return { [name]: ENDPOINT_DEFAULTS[name] === value ? undefined : value };
}
