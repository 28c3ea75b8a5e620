/**
 * Where the stack and Trawl's own services listen, as configuration says: every endpoint of
 * endpoints() (Kafka, the registry, Postgres, ClickHouse, S3), the ports no endpoint URL names
 * (ClickHouse's native protocol, the Kafka controller), the API (which also serves the console) and
 * every service's operator port.
 *
 * What it is for: a crawl must never reach these. The egress guard (@trawl/crawl's
 * `egressPolicyFromEnv`) refuses a `TRAWL_FETCH_ALLOW` that opens any of them, at `trawl up` and at the
 * start of every process that fetches for tenants. Read from the same variables and defaults the
 * parts themselves use, so a moved port moves here too.
 */
import { DEFAULT_OPERATOR_PORTS, operatorPortFromEnv, operatorPortVariable } from '../service/operator-server.ts';
import { endpoints } from '@trawl/base';

/** A port range one part listens on (the shape @trawl/crawl's StackListener takes). */
export interface StackListener {
  /** What listens, with the variable that moves it: `ClickHouse HTTP (CLICKHOUSE_URL)`. */
  readonly name: string;
  /** As configured: an address, a host name, or a wildcard (`0.0.0.0`, `::`). */
  readonly host: string;
  readonly ports: { readonly from: number; readonly to: number };
}

/**
 * Ports of the stack's parts that no endpoint URL carries: the local stack (scripts/stack) listens
 * on these, and takes its defaults from here.
 */
export const LISTENER_PORT_DEFAULTS = {
  TRAWL_CLICKHOUSE_TCP_PORT: 9000,
  TRAWL_KAFKA_CONTROLLER_PORT: 9093,
} as const;

/** The API's own defaults (apps/services/api config: TRAWL_API_HOST, TRAWL_API_PORT). */
const API_DEFAULT = { host: '127.0.0.1', port: 3000 };
/** How many workers `trawl up` starts unless TRAWL_WORKERS says (each takes the next operator port). */
const DEFAULT_WORKERS = 2;
const MAX_WORKERS = 64;

/** Every port the stack and the services listen on, from `env` (and TRAWL_HOME/stack.env). */
export function stackListeners(env: NodeJS.ProcessEnv = process.env): StackListener[] {
  const ep = endpoints(env);
  const out: StackListener[] = [];
  const add = (name: string, host: string, from: number, to = from) => {
    if (!host || from < 1 || to > 65535) return;
    // One line per place: the read URL is often the write URL's server under another user.
    if (!out.some((l) => l.host === host && l.ports.from === from && l.ports.to === to)) out.push({ name, host, ports: { from, to } });
  };
  const url = (name: string, text: string, dflt: number): URL | null => {
    try {
      const u = new URL(text);
      add(name, u.hostname, Number(u.port) || dflt);
      return u;
    } catch {
      return null; // a malformed endpoint fails where it is used, with its own message
    }
  };

  const controller = portOf(env, 'TRAWL_KAFKA_CONTROLLER_PORT');
  const brokersOn = new Map<string, number>();
  for (const broker of ep.kafkaBrokers) {
    const [host, port] = splitHostPort(broker);
    if (port) add('Kafka (KAFKA_BROKERS)', host, Number(port));
    brokersOn.set(host, (brokersOn.get(host) ?? 0) + 1);
  }
  // The local stack's nodes on one host listen for their controllers on every second port from
  // TRAWL_KAFKA_CONTROLLER_PORT (scripts/stack/src/kafka.ts): the range covers all of them.
  for (const [host, n] of brokersOn) add('Kafka controller (TRAWL_KAFKA_CONTROLLER_PORT)', host, controller, Math.min(controller + 2 * (n - 1), 65535));
  url('schema registry (SCHEMA_REGISTRY_URL)', ep.schemaRegistryUrl, defaultPort(ep.schemaRegistryUrl));
  postgres(ep.databaseUrl, add);
  const ch = url('ClickHouse HTTP (CLICKHOUSE_URL)', ep.clickhouseUrl, defaultPort(ep.clickhouseUrl));
  if (ep.clickhouseReadUrl !== ep.clickhouseUrl) url('ClickHouse HTTP (CLICKHOUSE_READ_URL)', ep.clickhouseReadUrl, defaultPort(ep.clickhouseReadUrl));
  if (ch) add('ClickHouse native (TRAWL_CLICKHOUSE_TCP_PORT)', ch.hostname, portOf(env, 'TRAWL_CLICKHOUSE_TCP_PORT'));
  url('S3 (TRAWL_S3_URL)', ep.s3Url, defaultPort(ep.s3Url));

  const apiPort = Number(env.TRAWL_API_PORT || API_DEFAULT.port);
  if (Number.isInteger(apiPort)) add('the API and console (TRAWL_API_PORT)', env.TRAWL_API_HOST || API_DEFAULT.host, apiPort);

  const operatorHost = env.TRAWL_METRICS_HOST || '127.0.0.1';
  for (const service of Object.keys(DEFAULT_OPERATOR_PORTS)) {
    const variable = operatorPortVariable(service);
    let first: number | undefined;
    try {
      first = operatorPortFromEnv(service, service === 'worker' ? { ...env, TRAWL_WORKER_INSTANCE: '1' } : env);
    } catch {
      continue; // a bad value stops that service itself, with its own message
    }
    if (first === undefined) continue;
    // Workers take one port each from the first; one set in the environment is every worker's.
    const last = service === 'worker' && !env[variable] ? first + workerCount(env) - 1 : first;
    add(`the ${service} operator port (${variable})`, operatorHost, first, Math.min(last, 65535));
  }
  return out;
}

function postgres(databaseUrl: string, add: (name: string, host: string, port: number) => void): void {
  try {
    const u = new URL(databaseUrl);
    // `postgres:///db?host=/run/postgresql` is a Unix socket; such a server usually listens on localhost too.
    const host = u.hostname || u.searchParams.get('host') || 'localhost';
    add('Postgres (DATABASE_URL)', host.startsWith('/') ? 'localhost' : host, Number(u.port || u.searchParams.get('port')) || 5432);
  } catch {
    // as above
  }
}

function portOf(env: NodeJS.ProcessEnv, name: keyof typeof LISTENER_PORT_DEFAULTS): number {
  const n = Number(env[name] || LISTENER_PORT_DEFAULTS[name]);
  return Number.isInteger(n) ? n : LISTENER_PORT_DEFAULTS[name];
}

function defaultPort(url: string): number {
  return url.startsWith('https:') ? 443 : 80;
}

function workerCount(env: NodeJS.ProcessEnv): number {
  const n = Number(env.TRAWL_WORKERS ?? DEFAULT_WORKERS);
  const instance = Number(env.TRAWL_WORKER_INSTANCE ?? 1);
  const count = Number.isInteger(n) && n >= 1 && n <= MAX_WORKERS ? n : DEFAULT_WORKERS;
  return Number.isInteger(instance) && instance > count ? instance : count;
}

function splitHostPort(authority: string): [string, string] {
  const i = authority.lastIndexOf(':');
  if (i === -1 || authority.endsWith(']')) return [authority, ''];
  return [authority.slice(0, i), authority.slice(i + 1)];
}
