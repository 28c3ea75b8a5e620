/**
 * Where the stack keeps its state and which ports it uses, resolved once per command from the
 * environment. Pure apart from reading TRAWL_HOME/stack.env, so it is unit-tested directly.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINT_DEFAULTS, parseEnvFile, repoRoot, stackEnvFile, trawlHome, type EndpointVariable } from '@trawl/streams';

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
  /** Run a private Postgres cluster even when a server answers on 127.0.0.1:5432. */
  readonly privatePostgres: boolean;
}

export const PORT_DEFAULTS = {
  TRAWL_KAFKA_PORT: 9092,
  TRAWL_KAFKA_CONTROLLER_PORT: 9093,
  TRAWL_REGISTRY_PORT: 8081,
  TRAWL_CLICKHOUSE_HTTP_PORT: 8123,
  TRAWL_CLICKHOUSE_TCP_PORT: 9000,
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

export function createContext(env: NodeJS.ProcessEnv = process.env): StackContext {
  const home = trawlHome(env);
  const file = stackEnvFile(env);
  const stackEnv = existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {};
  const flag = (env.TRAWL_POSTGRES_PRIVATE ?? '').toLowerCase();
  return {
    repoRoot,
    home,
    runDir: join(home, 'run'),
    logDir: join(home, 'logs'),
    env,
    stackEnv,
    ports: resolvePorts(env),
    privatePostgres: flag === '1' || flag === 'true' || Boolean(env.TRAWL_POSTGRES_PORT),
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
