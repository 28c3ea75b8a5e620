/**
 * A kafkajs client on Node 24 connects, sends and disconnects without a TimeoutNegativeWarning
 * (kafka/request-queue-timer.ts), which kafkajs 2.2.4 alone prints once per process.
 */
import { afterAll, expect, it } from 'vitest';
import { requireStack, testKafka, testLogger } from '../src/testing/index.ts';

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
process.on('warning', onWarning);
afterAll(() => void process.off('warning', onWarning));

it('connects, lists topics and disconnects without a negative timer', async () => {
  await requireStack({ kafka: true });
  const admin = testKafka('request-queue-timer', testLogger('request-queue-timer')).admin();
  await admin.connect();
  await admin.listTopics();
  await admin.disconnect();
  await new Promise((r) => setImmediate(r));
  expect(warnings.map((w) => `${w.name}: ${w.message}`).filter((w) => w.startsWith('TimeoutNegativeWarning'))).toEqual([]);
});
