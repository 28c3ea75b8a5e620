/**
 * The life of a Trawl service process: start, log that it is up, and on SIGTERM/SIGINT stop
 * gracefully (drain in-flight work, commit, disconnect) within a deadline; a second signal or the
 * deadline exits at once. Unhandled errors are logged as JSON and end the process with code 1,
 * so a supervisor restarts it and work resumes from Kafka. An event loop blocked past its limit
 * kills the process (loop-watchdog.ts), for the same supervisor to restart.
 *
 * It is also where every service gets its operator port (operator-server.ts): `/metrics` from
 * prom-client's process-wide registry (and the service's own, if it has one), `/healthz`, and
 * `/readyz` from the checks the service returns. The port opens before the service starts, so a
 * probe sees a service that is still connecting as alive and not ready.
 */
import type { Logger } from 'pino';
import { createLogger, defaultMetrics, eventLoopSampleMs, flushTraces, startTracing } from '@trawl/base';
import { kafkajsFastPaths } from '../kafka/kafkajs.ts';
import { startHeapCeiling } from './heap-ceiling.ts';
import { startHeartbeatFile } from './heartbeat-file.ts';
import { startLoopWatchdog } from './loop-watchdog.ts';
import type { Registry } from 'prom-client';
import { collectDefaultMetrics } from 'prom-client';
import { DEFAULT_OPERATOR_PORTS, operatorPortFromEnv, operatorPortVariable, startOperatorServer, type OperatorServer, type ServicePhase } from './operator-server.ts';
import type { ReadinessChecks } from './readiness.ts';

export interface Service {
  /** Stops gracefully; resolves when everything in flight is done and committed. */
  stop(): Promise<void>;
  /** What `/readyz` checks (a consumer joined, dependencies reachable); none: ready once started. */
  readonly readiness?: ReadinessChecks;
  /** A registry of the service's own, served on `/metrics` after the process-wide one. */
  readonly metrics?: Registry;
  /** Settings decided at start that an operator asks about, shown by `/readyz` beside its checks. */
  readonly facts?: Readonly<Record<string, unknown>>;
}

export interface RunServiceOptions {
  readonly stopTimeoutMs?: number;
  /** The heap ceiling in MB (heap-ceiling.ts); default TRAWL_HEAP_CEILING_MB or 192, 0 turns it off. */
  readonly heapCeilingMb?: number;
  /** How long the event loop may be blocked before the process is killed; default TRAWL_LOOP_LIMIT_MS or 30 000 (Kafka's session timeout: a blocked member dies about when the group gives up on it), 0 turns the watchdog off. */
  readonly loopLimitMs?: number;
  /** The operator port; default from the environment (operatorPortFromEnv), undefined: none. */
  readonly operatorPort?: number | undefined;
}

export const DEFAULT_LOOP_LIMIT_MS = 30_000;

/** A duration in ms from the environment: a number ≥ 0, else the default. */
export function msFromEnv(name: string, dflt: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`${name} must be a number of ms ≥ 0, got "${raw}"`);
  return ms;
}

/** The default heap ceiling: with ~100 MB outside the heap (the worker measured 294 MB RSS as it collected at 196 MB), a service stays under 300 MB. */
export const DEFAULT_HEAP_CEILING_MB = 192;

function heapCeilingFromEnv(): number {
  const raw = process.env.TRAWL_HEAP_CEILING_MB;
  if (raw === undefined || raw === '') return DEFAULT_HEAP_CEILING_MB;
  const mb = Number(raw);
  if (!Number.isFinite(mb) || mb < 0) throw new RangeError(`TRAWL_HEAP_CEILING_MB must be a number of MB ≥ 0 (0 turns the ceiling off), got "${raw}"`);
  return mb;
}

export async function runService(
  name: string,
  start: (logger: Logger) => Promise<Service>,
  { stopTimeoutMs = 30_000, heapCeilingMb, loopLimitMs, ...options }: RunServiceOptions = {},
): Promise<void> {
  const logger = createLogger(name);
  let phase: ServicePhase = 'starting';
  let started: Service | undefined;
  const fail = (err: unknown, what: string) => {
    logger.fatal({ err }, what);
    process.exit(1);
  };
  process.on('unhandledRejection', (err) => fail(err, 'unhandled rejection'));
  process.on('uncaughtException', (err) => fail(err, 'uncaught exception'));

  let service: Service;
  try {
    startHeapCeiling({ ceilingMb: heapCeilingMb ?? heapCeilingFromEnv(), logger });
    startLoopWatchdog({ limitMs: loopLimitMs ?? msFromEnv('TRAWL_LOOP_LIMIT_MS', DEFAULT_LOOP_LIMIT_MS), logger, name });
    const { exporting } = startTracing(name);
    if (exporting) logger.info('exporting traces over OTLP');
    await openOperatorPort(name, logger, 'operatorPort' in options ? options.operatorPort : operatorPortFromEnv(name), {
      phase: () => phase,
      checks: () => started?.readiness ?? {},
      facts: () => started?.facts,
      registries: () => [defaultMetrics, ...(started?.metrics ? [started.metrics] : [])],
    });
    service = await start(logger);
    started = service;
    phase = 'running';
  } catch (err) {
    fail(err, `${name} failed to start`);
    return;
  }
  const { active, reason } = kafkajsFastPaths;
  logger.info({ kafkajsFastPaths: active ? 'on' : reason }, `${name} started`);
  // Beats only once started: a service still connecting is not yet healthy.
  if (process.env.TRAWL_HEARTBEAT_FILE) startHeartbeatFile({ file: process.env.TRAWL_HEARTBEAT_FILE, logger });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    phase = 'stopping';
    logger.info({ signal }, `${name} stopping`);
    const timer = setTimeout(() => {
      logger.error({ stopTimeoutMs }, 'graceful stop timed out: exiting');
      process.exit(1);
    }, stopTimeoutMs);
    timer.unref();
    service.stop().then(flushTraces).then(
      () => {
        logger.info(`${name} stopped`);
        process.exit(0);
      },
      (err: unknown) => fail(err, 'error while stopping'),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

let processMetricsOn = false;

/**
 * Opens the operator port, when there is one. A port set in the environment must open (else the
 * start fails, naming the variable); a default port another process holds is skipped with a
 * warning, so that tests and tools starting services side by side do not collide on it.
 */
async function openOperatorPort(
  name: string,
  logger: Logger,
  port: number | undefined,
  o: Pick<Parameters<typeof startOperatorServer>[0], 'phase' | 'checks' | 'facts' | 'registries'>,
): Promise<OperatorServer | undefined> {
  if (!processMetricsOn) {
    collectDefaultMetrics({ register: defaultMetrics, prefix: 'trawl_', eventLoopMonitoringPrecision: eventLoopSampleMs() });
    processMetricsOn = true;
  }
  if (port === undefined) {
    logger.info(`no operator port (${operatorPortVariable(name)}=0)`);
    return undefined;
  }
  const host = process.env.TRAWL_METRICS_HOST || '127.0.0.1';
  try {
    const server = await startOperatorServer({ ...o, host, port });
    logger.info({ metrics_url: `${server.url}/metrics`, healthz: `${server.url}/healthz`, readyz: `${server.url}/readyz` }, 'operator port listening');
    return server;
  } catch (err) {
    const configured = Boolean(process.env[operatorPortVariable(name)] || (name === 'api' && process.env.TRAWL_METRICS_PORT));
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && !configured && DEFAULT_OPERATOR_PORTS[name] !== undefined) {
      logger.warn({ port }, `the default operator port is taken: running without one (set ${operatorPortVariable(name)})`);
      return undefined;
    }
    throw new Error(`cannot open the operator port ${host}:${port} (${operatorPortVariable(name)}): ${(err as Error).message}`, { cause: err });
  }
}
