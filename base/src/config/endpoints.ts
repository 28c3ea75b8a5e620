/**
 * Where every outside part lives. Each endpoint comes from an environment variable; when it is
 * unset, the value the local stack wrote to `TRAWL_HOME/stack.env` is used (the stack may pick a
 * private Postgres cluster, for instance), and failing that the local stack's default.
 *
 * One module so that apps, tests, scripts and the stack manager agree on names and defaults.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Endpoints {
  /** Comma-separated bootstrap brokers. */
  readonly kafkaBrokers: readonly string[];
  /** Base URL of the Confluent-compatible registry API. */
  readonly schemaRegistryUrl: string;
  readonly databaseUrl: string;
  /** ClickHouse HTTP interface, as the user that writes (projector-ch, replays, tests). */
  readonly clickhouseUrl: string;
  /**
   * The same server as a read-only user, for queries people write or choose (the console's
   * dashboards): CLICKHOUSE_READ_URL, else CLICKHOUSE_URL.
   */
  readonly clickhouseReadUrl: string;
  readonly clickhouseDatabase: string;
  readonly chromiumPath: string;
  /** The S3 endpoint of the content store, with the access key and secret as user and password. */
  readonly s3Url: string;
  readonly s3Bucket: string;
}

/** The repository root, found from this file's place (base/src/config/). */
export const repoRoot: string = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The folders of apps/, one per runtime role. */
const APP_ROLES = ['services', 'libs', 'harness', 'tools'] as const;

/** An app's package folder, `apps/<role>/<app>` (apps/services/<app> when no role holds it). */
export function appDir(app: string): string {
  for (const role of APP_ROLES) {
    const dir = join(repoRoot, 'apps', role, app);
    if (existsSync(dir)) return dir;
  }
  return join(repoRoot, 'apps', 'services', app);
}

/** State of the local stack and logs: `TRAWL_HOME`, default `<repo>/.trawl`. */
export function trawlHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.TRAWL_HOME ? resolve(env.TRAWL_HOME) : join(repoRoot, '.trawl');
}

export const ENDPOINT_DEFAULTS = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081/apis/ccompat/v7',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/trawl',
  CLICKHOUSE_URL: 'http://127.0.0.1:8123',
  CLICKHOUSE_DATABASE: 'trawl',
  CHROMIUM_PATH: '/usr/bin/chromium',
  // Not S3's usual 9000: the local ClickHouse's native port is 9000.
  TRAWL_S3_URL: 'http://127.0.0.1:9100',
  TRAWL_S3_BUCKET: 'trawl-content',
} as const;

export type EndpointVariable = keyof typeof ENDPOINT_DEFAULTS;

/** Reads `KEY=value` lines; blank lines and `#` comments are skipped. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

export function stackEnvFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(trawlHome(env), 'stack.env');
}

function readStackEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const file = stackEnvFile(env);
  return existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {};
}

/** Resolves one variable: process env, then the stack's choice, then the default. */
export function endpointVariable(name: EndpointVariable, env: NodeJS.ProcessEnv = process.env): string {
  return env[name] || readStackEnv(env)[name] || ENDPOINT_DEFAULTS[name];
}

export function endpoints(env: NodeJS.ProcessEnv = process.env): Endpoints {
  const stack = readStackEnv(env);
  const get = (name: EndpointVariable): string => env[name] || stack[name] || ENDPOINT_DEFAULTS[name];
  const clickhouseUrl = get('CLICKHOUSE_URL').replace(/\/+$/, '');
  // The reader comes from where the writer comes from: a CLICKHOUSE_URL set in the environment
  // names another server than the stack's, whose reader stack.env may still hold.
  const clickhouseReadUrl = env.CLICKHOUSE_READ_URL || (env.CLICKHOUSE_URL ? '' : stack.CLICKHOUSE_READ_URL) || clickhouseUrl;
  return {
    kafkaBrokers: get('KAFKA_BROKERS').split(',').map((b) => b.trim()).filter(Boolean),
    schemaRegistryUrl: get('SCHEMA_REGISTRY_URL').replace(/\/+$/, ''),
    databaseUrl: get('DATABASE_URL'),
    clickhouseUrl,
    clickhouseReadUrl: clickhouseReadUrl.replace(/\/+$/, ''),
    clickhouseDatabase: get('CLICKHOUSE_DATABASE'),
    chromiumPath: get('CHROMIUM_PATH'),
    s3Url: get('TRAWL_S3_URL').replace(/\/+$/, ''),
    s3Bucket: get('TRAWL_S3_BUCKET'),
  };
}
