import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import {
  NonRetriableError,
  RetriableError,
  readTopics,
  retryTiers,
  runEventConsumer,
  TRAWL_HEADERS,
  type DeadLetter,
  type EventConsumer,
  type LoggedMessage,
} from '@trawl/streams';
import { testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

let h: Harness;
let consumer: EventConsumer;
const processed: string[] = [];
const attempts = new Map<string, number[]>();
const hooks: DeadLetter[] = [];

function header(m: LoggedMessage, name: string): string | undefined {
  const v = m.headers[name];
  return v === undefined ? undefined : v.toString();
}

beforeAll(async () => {
  h = await harness('dead-letters', [
    { name: 'fetch', partitions: 2 },
    { name: 'fetch.retry.1' },
    { name: 'fetch.retry.2' },
    { name: 'fetch.retry.3' },
    { name: 'fetch.dlq' },
  ]);
  const source = h.topics.names.fetch!;
  consumer = await runEventConsumer({
    name: 'dead-letters',
    groupId: testId('g-dlq'),
    topics: [source],
    retryTiers: retryTiers(source, [200, 200, 200]),
    deadLetterTopic: h.topics.names['fetch.dlq']!,
    kafka: h.kafka,
    logger: h.logger,
    producer: h.producer,
    metrics: h.metrics,
    maxWaitTimeMs: 200,
    onDeadLetter: (dl) => {
      hooks.push(dl);
    },
    handler: (event) => {
      if (event.name !== 'FetchRequested') return;
      const id = event.value.fetch_id;
      attempts.set(id, [...(attempts.get(id) ?? []), event.attempt]);
      if (id === 'always-503') throw new RetriableError('HTTP 503 Service Unavailable');
      if (id === 'gone-404') throw new NonRetriableError('HTTP 404 Not Found');
      processed.push(id);
    },
  });
  await consumer.ready;
});

afterAll(async () => {
  await consumer?.stop();
  await h?.close();
});

async function deadLetters(count: number): Promise<LoggedMessage[]> {
  let found: LoggedMessage[] = [];
  await waitFor(
    async () => {
      found = await readTopics(h.kafka, [h.topics.names['fetch.dlq']!]);
      return found.length >= count;
    },
    { timeoutMs: 20_000, intervalMs: 250, message: () => `${count} dead letters (have ${found.length})` },
  );
  return found;
}

describe('dead letters', () => {
  it('dead-letters a message that always fails after the last tier, with its headers and original bytes', async () => {
    const source = h.topics.names.fetch!;
    await emitSample(h.producer, 'FetchRequested', { fetch_id: 'always-503', url: 'https://down.example/' }, { topic: source, key: 'down.example' }, samples.FetchRequested);
    const [original] = (await readTopics(h.kafka, [source])).filter((m) => m.key?.toString() === 'down.example');
    const [dead] = (await deadLetters(1)).filter((m) => m.key?.toString() === 'down.example');

    expect(attempts.get('always-503')).toEqual([1, 2, 3, 4]);
    expect(dead!.value!.equals(original!.value!)).toBe(true);
    expect(dead!.key!.equals(original!.key!)).toBe(true);
    expect(header(dead!, TRAWL_HEADERS.originalTopic)).toBe(source);
    expect(header(dead!, TRAWL_HEADERS.originalPartition)).toBe(String(original!.partition));
    expect(header(dead!, TRAWL_HEADERS.originalOffset)).toBe(original!.offset);
    expect(header(dead!, TRAWL_HEADERS.errorClass)).toBe('RetriableError');
    expect(header(dead!, TRAWL_HEADERS.errorMessage)).toBe('HTTP 503 Service Unavailable');
    expect(header(dead!, TRAWL_HEADERS.attempts)).toBe('4');
    expect(header(dead!, TRAWL_HEADERS.deadLetterReason)).toBe('exhausted');
    expect(header(dead!, TRAWL_HEADERS.dueAt)).toBeUndefined();
    await waitFor(() => hooks.some((d) => d.reason === 'exhausted'), { message: 'the onDeadLetter hook' });
    const hook = hooks.find((d) => d.reason === 'exhausted')!;
    expect(hook.event?.name).toBe('FetchRequested');
    expect(hook.origin).toEqual({ topic: source, partition: original!.partition, offset: original!.offset });
  });

  it('dead-letters a non-retriable failure at once', async () => {
    const source = h.topics.names.fetch!;
    await emitSample(h.producer, 'FetchRequested', { fetch_id: 'gone-404', url: 'https://gone.example/' }, { topic: source, key: 'gone.example' }, samples.FetchRequested);
    const dead = (await deadLetters(2)).find((m) => m.key?.toString() === 'gone.example')!;
    expect(attempts.get('gone-404')).toEqual([1]);
    expect(header(dead, TRAWL_HEADERS.deadLetterReason)).toBe('non-retriable');
    expect(header(dead, TRAWL_HEADERS.attempts)).toBe('1');
    expect(header(dead, TRAWL_HEADERS.errorClass)).toBe('NonRetriableError');
  });

  it('dead-letters undecodable messages at once and keeps consuming the partition', async () => {
    const source = h.topics.names.fetch!;
    const valid = await h.codec.encode(source, 'FetchRequested', samples.FetchRequested);
    // (A schema id the registry does not know is not among them: it is waited for, registry-not-found.test.ts.)
    const poison = [
      { kind: 'bad-magic', value: Buffer.from('{"not":"avro"}') },
      { kind: 'too-short', value: Buffer.from([0, 0]) },
      { kind: 'corrupt-body', value: valid.subarray(0, 12) },
    ];
    // One key for all, so the poison and the valid message after it share a partition.
    const key = 'poison.example';
    for (const p of poison) await h.producer.sendRaw({ topic: source, key, value: p.value, headers: { 'test-case': p.kind } });
    await emitSample(h.producer, 'FetchRequested', { fetch_id: 'after-poison', url: 'https://poison.example/ok' }, { topic: source, key }, samples.FetchRequested);

    const dead = await deadLetters(2 + poison.length);
    for (const p of poison) {
      const d = dead.find((m) => header(m, 'test-case') === p.kind);
      expect(d, p.kind).toBeDefined();
      expect(header(d!, TRAWL_HEADERS.deadLetterReason), p.kind).toBe('undecodable');
      expect(header(d!, TRAWL_HEADERS.errorClass), p.kind).toBe('UndecodableMessageError');
      expect(header(d!, TRAWL_HEADERS.originalTopic), p.kind).toBe(source);
      expect(header(d!, TRAWL_HEADERS.attempts), p.kind).toBe('1');
      expect(d!.key!.toString(), p.kind).toBe(key);
      expect(d!.value!.equals(p.value), p.kind).toBe(true);
    }
    await waitFor(() => processed.includes('after-poison'), { message: 'the message after the poison' });
    expect(hooks.filter((d) => d.reason === 'undecodable')).toHaveLength(poison.length);
    expect(consumer.stats().deadLettered).toBe(2 + poison.length);
  });

  it('exposes its figures in the Prometheus text format, lag falling to 0 once committed', async () => {
    await waitFor(() => consumer.stats().lag === 0, { message: () => `lag 0 (is ${consumer.stats().lag})` });
    const text = await h.metrics.metrics();
    const source = h.topics.names.fetch!;
    const sample = (line: string) => Number(text.split('\n').find((l: string) => l.startsWith(line))?.split(' ').pop());
    expect(sample(`trawl_consumer_messages_total{consumer="dead-letters",topic="${source}",outcome="processed"}`)).toBe(1);
    expect(sample(`trawl_consumer_messages_total{consumer="dead-letters",topic="${source}",outcome="retried"}`)).toBe(1);
    expect(sample(`trawl_consumer_messages_total{consumer="dead-letters",topic="${source}",outcome="dead_lettered"}`)).toBe(4);
    expect(sample(`trawl_consumer_messages_total{consumer="dead-letters",topic="${source}.retry.3",outcome="dead_lettered"}`)).toBe(1);
    expect(sample(`trawl_consumer_lag{consumer="dead-letters",topic="${source}",partition="0"}`)).toBe(0);
    expect(sample('trawl_consumer_in_flight{consumer="dead-letters"}')).toBe(0);
    expect(text).toContain('# TYPE trawl_consumer_lag gauge');
  });
});
