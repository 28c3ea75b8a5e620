import pino, { type Logger } from 'pino';

/** Every service logs structured JSON through pino; `TRAWL_LOG_LEVEL` sets the level (default info). */
export function createLogger(service: string, env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ name: service, level: env.TRAWL_LOG_LEVEL ?? 'info', base: { service, pid: process.pid } });
}

export type { Logger };
