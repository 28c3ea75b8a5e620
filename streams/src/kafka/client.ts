import type { LogEntry } from 'kafkajs';
import { Kafka, logLevel } from './kafkajs.ts';
import type { Logger } from 'pino';
import { endpoints, type Endpoints } from '@trawl/base';

const LEVELS: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/** kafkajs logs through the service's pino logger, as structured JSON like everything else. */
function pinoLogCreator(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _ts, logger: _name, ...rest } = log;
      logger[LEVELS[level] ?? 'info']({ kafkajs: namespace, ...rest }, message);
    };
}

export interface KafkaClientOptions {
  readonly clientId: string;
  readonly logger: Logger;
  readonly endpoints?: Endpoints;
}

export function createKafka({ clientId, logger, endpoints: ep = endpoints() }: KafkaClientOptions): Kafka {
  // kafkajs's v2 partitioner is the Java client's murmur2: keep it, silence its notice.
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  return new Kafka({
    clientId,
    brokers: [...ep.kafkaBrokers],
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(logger.child({ component: 'kafkajs' })),
    retry: { initialRetryTime: 200, retries: 10, maxRetryTime: 10_000 },
    connectionTimeout: 5_000,
  });
}
