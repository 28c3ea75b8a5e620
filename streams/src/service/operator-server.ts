/**
 * The operator port of every service: `/metrics` (Prometheus text from prom-client), `/healthz`
 * (liveness: the process answers and its event loop keeps time) and `/readyz` (readiness: the
 * service started, is not stopping, and each of its checks passes — its consumer group joined, its
 * dependencies reachable — and the facts it decided at start). A plain node:http server: it must answer while the service is still
 * connecting, and it adds no framework to services that have none. Answers carry no credentials:
 * check errors are redacted (readiness.ts), and nothing else is echoed. `/readyz` answers from a
 * round of checks at most `readyCacheMs` old, one round in flight at a time (readiness-cache.ts),
 * so probes cost the dependencies a bounded amount however often they come.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { ReadinessChecks } from './readiness.ts';
import { ReadinessCache, readyCacheMsFromEnv } from './readiness-cache.ts';

export type ServicePhase = 'starting' | 'running' | 'stopping';

export interface OperatorServerOptions {
  readonly host: string;
  /** 0 asks the system for a free port (tests); `address()` tells which. */
  readonly port: number;
  /** Rendered in order, concatenated: the process-wide one and a service's own. */
  readonly registries: () => readonly Registry[];
  readonly phase: () => ServicePhase;
  readonly checks: () => ReadinessChecks;
  /** Settings the service decided at start that an operator asks about (the worker's browser sandbox), shown by `/readyz`. */
  readonly facts?: () => Readonly<Record<string, unknown>> | undefined;
  /** `/healthz` fails once timers fire this late (the loop is held up); default 5 000 ms. */
  readonly maxLoopDelayMs?: number;
  /** How long a round of checks answers `/readyz`; default TRAWL_READY_CACHE_MS (2 000 ms). */
  readonly readyCacheMs?: number;
}

export interface OperatorServer {
  readonly url: string;
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export async function startOperatorServer(o: OperatorServerOptions): Promise<OperatorServer> {
  const maxLoopDelayMs = o.maxLoopDelayMs ?? 5_000;
  const readiness = new ReadinessCache(o.checks, { ttlMs: o.readyCacheMs ?? readyCacheMsFromEnv() });
  // A timer that should fire every second: how late it fires is how long the loop was held up
  // (a stall of `maxLoopDelayMs`, seconds, shows as well at this pace as at a faster one, which
  // would only wake an idle process more often).
  const TICK_MS = 1_000;
  let lastTick = performance.now();
  let loopDelayMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    loopDelayMs = Math.max(0, now - lastTick - TICK_MS);
    lastTick = now;
  }, TICK_MS);
  ticker.unref();

  const server: Server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, JSON_TYPE, JSON.stringify({ error: 'method not allowed' }));
    if (path === '/healthz') {
      const sinceTick = performance.now() - lastTick - TICK_MS;
      const delay = Math.round(Math.max(loopDelayMs, sinceTick, 0));
      const ok = delay <= maxLoopDelayMs;
      return send(ok ? 200 : 503, JSON_TYPE, JSON.stringify({ status: ok ? 'ok' : 'loop-blocked', phase: o.phase(), loopDelayMs: delay }));
    }
    if (path === '/readyz') {
      const phase = o.phase();
      if (phase !== 'running') return send(503, JSON_TYPE, JSON.stringify({ status: 'unready', phase, checks: {} }));
      void readiness.results().then(
        (checks) => {
          const ok = Object.values(checks).every((c) => c.ok);
          const facts = o.facts?.();
          send(ok ? 200 : 503, JSON_TYPE, JSON.stringify({ status: ok ? 'ready' : 'unready', phase, checks, ...(facts ? { facts } : {}) }));
        },
        () => send(503, JSON_TYPE, JSON.stringify({ status: 'unready', phase })),
      );
      return;
    }
    if (path === '/metrics') {
      const registries = o.registries();
      void Promise.all(registries.map((r) => r.metrics())).then(
        (texts) => send(200, registries[0]?.contentType ?? 'text/plain; version=0.0.4; charset=utf-8', texts.filter(Boolean).join('\n')),
        (err: unknown) => send(500, 'text/plain; charset=utf-8', `metrics failed: ${err instanceof Error ? err.name : 'error'}\n`),
      );
      return;
    }
    send(404, JSON_TYPE, JSON.stringify({ error: 'not found', paths: ['/metrics', '/healthz', '/readyz'] }));
  });
  // Scrapers and probes open a connection each time; nothing here should hold a stop up.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    async close() {
      clearInterval(ticker);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The default operator port of each service; the workers `trawl up` starts take 9470 + instance − 1. */
export const DEFAULT_OPERATOR_PORTS: Readonly<Record<string, number>> = {
  api: 9460,
  'projector-pg': 9461,
  'projector-ch': 9462,
  dispatcher: 9463,
  frontier: 9464,
  webhooks: 9465,
  worker: 9470,
};

/** `TRAWL_<SERVICE>_METRICS_PORT` (projector-pg: TRAWL_PROJECTOR_PG_METRICS_PORT). */
export function operatorPortVariable(service: string): string {
  return `TRAWL_${service.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_METRICS_PORT`;
}

/**
 * The operator port of `service` from the environment: `TRAWL_<SERVICE>_METRICS_PORT` (for the API
 * also its older name `TRAWL_METRICS_PORT`), else the default (a worker's shifted by
 * `TRAWL_WORKER_INSTANCE`); 0 turns the operator port off (undefined).
 */
export function operatorPortFromEnv(service: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const name = operatorPortVariable(service);
  const raw = env[name] || (service === 'api' ? env.TRAWL_METRICS_PORT : undefined);
  if (raw !== undefined && raw !== '') {
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RangeError(`${name} must be a port number (0 turns the operator port off), got "${raw}"`);
    return port === 0 ? undefined : port;
  }
  const base = DEFAULT_OPERATOR_PORTS[service];
  if (base === undefined) return undefined;
  const instance = Number(env.TRAWL_WORKER_INSTANCE ?? 1);
  return service === 'worker' && Number.isInteger(instance) && instance >= 1 ? base + instance - 1 : base;
}
