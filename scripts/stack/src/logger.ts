import pino, { type Logger } from 'pino';

/**
 * The logger handed to kafkajs. Silent unless TRAWL_LOG_LEVEL asks otherwise: failures reach the
 * user as the part's error line, and kafkajs's retry chatter would only bury the progress lines.
 * Writes to stderr, since stdout carries `status`'s table.
 */
export function stackLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ name: 'trawl-stack', level: env.TRAWL_LOG_LEVEL ?? 'silent' }, pino.destination(2));
}
