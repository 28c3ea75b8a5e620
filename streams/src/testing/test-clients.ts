/**
 * Clients for tests: a pino logger that is quiet unless TRAWL_TEST_LOG_LEVEL says otherwise
 * (failing tests print their own assertions; set it to `debug` to see why), and a Kafka client
 * that logs through it.
 */
import pino, { type Logger } from 'pino';
import type { Kafka } from 'kafkajs';
import { createKafka } from '../kafka/client.ts';

export function testLogger(name: string): Logger {
  return pino({ name, level: process.env.TRAWL_TEST_LOG_LEVEL ?? 'silent' });
}

export function testKafka(name: string, logger: Logger = testLogger(name)): Kafka {
  return createKafka({ clientId: name, logger });
}
