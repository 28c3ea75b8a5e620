import pino, { type Logger } from 'pino';
import { endpoints } from './config/endpoints.ts';
import { endpointSecrets, redactText } from './config/redact.ts';

/**
 * Every service logs structured JSON through pino; `TRAWL_LOG_LEVEL` sets the level (default info).
 * Each line leaves with the passwords of the configured endpoints masked, and those of any
 * `scheme://user:password@` in it: a driver's error that quotes its connection string must not put
 * a credential in a log. Without credentials configured nothing is rewritten.
 */
export function createLogger(service: string, env: NodeJS.ProcessEnv = process.env): Logger {
  const secrets = endpointSecrets(endpoints(env));
  return pino({
    name: service,
    level: env.TRAWL_LOG_LEVEL ?? 'info',
    base: { service, pid: process.pid },
    ...(secrets.length > 0 ? { hooks: { streamWrite: (line: string) => redactText(line, secrets) } } : {}),
  });
}

export type { Logger };
