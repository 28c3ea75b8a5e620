/**
 * kafkajs's request queue, as restated in kafka/request-queue-timer.ts: a client on Node 24
 * connects, sends and disconnects without a TimeoutNegativeWarning; an idle connection arms no
 * timer of its own besides its once-a-second timeout check; a throttled request still goes out
 * when the throttle ends.
 */
import { createRequire } from 'node:module';
import { afterAll, expect, it } from 'vitest';
import { Kafka as _Kafka } from '../src/kafka/kafkajs.ts';
import { requireStack, testKafka, testLogger } from '../src/testing/index.ts';

void _Kafka; // loads kafkajs with the restated methods before the queue class is required below
const require = createRequire(import.meta.url);

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

it('an idle connection keeps no timer: only a request in flight arms the look for timed-out requests', async () => {
  await requireStack({ kafka: true });
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const intervals: number[] = [];
  const realSetInterval = globalThis.setInterval;
  const realSetTimeout = globalThis.setTimeout;
  let timeouts = 0;
  const idleTimers = timers();
  globalThis.setInterval = ((fn: () => void, ms: number) => {
    intervals.push(ms);
    return realSetInterval(fn, ms);
  }) as typeof setInterval;
  const admin = testKafka('request-queue-idle', testLogger('request-queue-idle')).admin();
  try {
    await admin.connect();
    await admin.listTopics();
    globalThis.setTimeout = ((fn: () => void, ms?: number) => {
      timeouts++;
      return realSetTimeout(fn, ms);
    }) as typeof setTimeout;
    await new Promise((r) => realSetTimeout(r, 300));
    globalThis.setTimeout = realSetTimeout;
    // kafkajs alone re-arms a 1 ms check after every check: some 300 timers in 300 ms.
    expect(timeouts).toBeLessThan(5);
    // kafkajs alone keeps a 100 ms interval on each of the admin's connections for as long as they are open.
    expect(intervals).not.toContain(100);
    expect(timers()).toBeLessThanOrEqual(idleTimers);
    await admin.listTopics();
  } finally {
    globalThis.setTimeout = realSetTimeout;
    globalThis.setInterval = realSetInterval;
    await admin.disconnect();
  }
});

it('times out a request in flight past its timeout, on time', async () => {
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (o: object) => { scheduleRequestTimeoutCheck(): void; push(r: object): void; destroy(): void };
  const noop = () => {};
  const logger = { debug: noop, info: noop, warn: noop, error: noop, namespace: () => logger };
  const queue = new RequestQueue({ requestTimeout: 100, enforceRequestTimeout: true, maxInFlightRequests: null, clientId: 't', broker: 'b', logger, isConnected: () => true });
  queue.scheduleRequestTimeoutCheck();
  const started = Date.now();
  const rejected = new Promise<number>((resolve) => {
    const entry = { correlationId: 7, apiKey: 0, apiName: 'T', apiVersion: 0, resolve: noop, reject: () => resolve(Date.now() - started) };
    queue.push({ entry, expectResponse: true, sendRequest: noop });
  });
  const after = await Promise.race([rejected, new Promise<number>((r) => setTimeout(() => r(-1), 2_000))]);
  queue.destroy();
  expect(after).toBeGreaterThanOrEqual(100);
  expect(after).toBeLessThan(400);
});

it('sends a request queued behind a broker throttle once the throttle ends', async () => {
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (o: object) => {
    throttledUntil: number;
    pending: unknown[];
    push(r: object): void;
    destroy(): void;
  };
  const noop = () => {};
  const logger = { debug: noop, info: noop, warn: noop, error: noop, namespace: () => logger };
  const queue = new RequestQueue({ requestTimeout: 30_000, enforceRequestTimeout: false, maxInFlightRequests: null, clientId: 't', broker: 'b', logger, isConnected: () => true });
  queue.throttledUntil = Date.now() + 50;
  let sentAt = 0;
  const started = Date.now();
  const entry = { correlationId: 1, apiKey: 0, apiName: 'T', apiVersion: 0, resolve: noop, reject: noop };
  queue.push({ entry, expectResponse: false, sendRequest: () => (sentAt = Date.now()) });
  expect(queue.pending).toHaveLength(1);
  await new Promise((r) => setTimeout(r, 150));
  queue.destroy();
  expect(queue.pending).toHaveLength(0);
  expect(sentAt - started).toBeGreaterThanOrEqual(45);
});
