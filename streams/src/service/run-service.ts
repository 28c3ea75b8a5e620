/**
 * The life of a Trawl service process: start, log that it is up, and on SIGTERM/SIGINT stop
 * gracefully (drain in-flight work, commit, disconnect) within a deadline; a second signal or the
 * deadline exits at once. Unhandled errors are logged as JSON and end the process with code 1,
 * so a supervisor restarts it and work resumes from Kafka.
 */
import type { Logger } from 'pino';
import { createLogger } from '../logger.ts';
import { kafkajsFastPaths } from '../kafka/kafkajs.ts';

export interface Service {
  /** Stops gracefully; resolves when everything in flight is done and committed. */
  stop(): Promise<void>;
}

export interface RunServiceOptions {
  readonly stopTimeoutMs?: number;
}

export async function runService(
  name: string,
  start: (logger: Logger) => Promise<Service>,
  { stopTimeoutMs = 30_000 }: RunServiceOptions = {},
): Promise<void> {
  const logger = createLogger(name);
  const fail = (err: unknown, what: string) => {
    logger.fatal({ err }, what);
    process.exit(1);
  };
  process.on('unhandledRejection', (err) => fail(err, 'unhandled rejection'));
  process.on('uncaughtException', (err) => fail(err, 'uncaught exception'));

  let service: Service;
  try {
    service = await start(logger);
  } catch (err) {
    fail(err, `${name} failed to start`);
    return;
  }
  const { active, reason } = kafkajsFastPaths;
  logger.info({ kafkajsFastPaths: active ? 'on' : reason }, `${name} started`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, `${name} stopping`);
    const timer = setTimeout(() => {
      logger.error({ stopTimeoutMs }, 'graceful stop timed out: exiting');
      process.exit(1);
    }, stopTimeoutMs);
    timer.unref();
    service.stop().then(
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
