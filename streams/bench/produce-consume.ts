/**
 * Avro produce → consume benchmark, end to end in one process: the EventProducer emits
 * PageFetched events (registry-encoded, idempotent, acks=all) while runEventConsumer decodes each
 * and hands it to a handler that records its latency (handler time − occurred_at, set at emit).
 *
 * Two phases, because a saturated producer's queue would otherwise pass for latency:
 *  1. throughput — emit BENCH_EVENTS as fast as the producer takes them (at most
 *     BENCH_OUTSTANDING unacknowledged), and time until the last one is consumed;
 *  2. latency — emit BENCH_LATENCY_EVENTS at a steady BENCH_RATE (default half the measured
 *     throughput, at most 10 000/s) and take percentiles.
 * It also reports CPU seconds of this process per 10 000 events: on a shared machine, events/s
 * measure the share of CPU the process got as much as the code.
 *
 * Prints figures and one JSON line, and writes bench-results/streams.json at the repo root.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { samples } from '@trawl/schemas';
import { EventCodec, EventProducer, MetricsRegistry, repoRoot, runEventConsumer } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testId, testKafka, testLogger } from '@trawl/streams/testing';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const LATENCY_EVENTS = Number(process.env.BENCH_LATENCY_EVENTS ?? 30_000);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 6);
const OUTSTANDING = Number(process.env.BENCH_OUTSTANDING ?? 20_000);
const TARGET = 20_000;

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function main(): Promise<void> {
  await requireStack({ kafka: true, registry: true });
  const logger = testLogger('bench');
  const kafka = testKafka('bench', logger);
  const topics = await createTestTopics(kafka, [{ name: 'pages', partitions: PARTITIONS }, { name: 'dlq' }], { runId: testId('bench') });
  const topic = topics.names.pages!;
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  await producer.connect();
  const { event_id: _id, occurred_at: _at, causation_id: _c, ...body } = samples.PageFetched;
  const eventBytes = (await codec.encode(topic, 'PageFetched', samples.PageFetched)).length;

  // Consumer side: counts and latencies of the current phase.
  let expected = 0;
  let consumed = 0;
  let lastConsumedAt = 0;
  let latencies = new Float64Array(0);
  let phaseDone: () => void = () => {};
  const consumer = await runEventConsumer({
    name: 'bench',
    groupId: testId('g-bench'),
    topics: [topic],
    deadLetterTopic: topics.names.dlq!,
    kafka,
    logger,
    producer,
    codec,
    metrics: new MetricsRegistry(),
    statsLogIntervalMs: 0,
    maxBuffered: 50_000,
    maxUncommittedPerPartition: 10_000,
    handler: (event) => {
      const now = Date.now();
      if (consumed < latencies.length) latencies[consumed] = now - event.value.occurred_at.getTime();
      consumed += 1;
      lastConsumedAt = now;
      if (consumed === expected) phaseDone();
    },
  });
  await consumer.ready;
  const phase = (count: number) => {
    expected = count;
    consumed = 0;
    latencies = new Float64Array(count);
    return new Promise<void>((resolve, reject) => {
      phaseDone = resolve;
      setTimeout(() => reject(new Error(`consumed ${consumed} of ${count} after 180 s`)), 180_000).unref();
    });
  };
  const emit = (i: number) => producer.emit('PageFetched', { ...body, job_id: `job-${i % 64}` }, { topic, key: `job-${i % 64}` });

  // Phase 1: throughput.
  const throughputDone = phase(EVENTS);
  const load1 = loadavg()[0]!;
  const cpu0 = cpuSeconds();
  const startedAt = Date.now();
  let inFlight = 0;
  let wake: (() => void) | undefined;
  for (let i = 0; i < EVENTS; i++) {
    if (inFlight >= OUTSTANDING) await new Promise<void>((r) => (wake = r));
    inFlight += 1;
    void emit(i).then(() => {
      inFlight -= 1;
      if (wake && inFlight < OUTSTANDING / 2) {
        const w = wake;
        wake = undefined;
        w();
      }
    });
  }
  await producer.drain();
  const producedAt = Date.now();
  await throughputDone;
  const cpuUsed = cpuSeconds() - cpu0;
  const elapsedS = (lastConsumedAt - startedAt) / 1000;
  const throughput = EVENTS / elapsedS;
  const saturated = latencies.slice().sort();

  // Phase 2: latency at a steady rate.
  const rate = Number(process.env.BENCH_RATE ?? Math.max(1000, Math.min(10_000, Math.round(throughput / 2))));
  const latencyDone = phase(LATENCY_EVENTS);
  const paceStart = Date.now();
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const due = paceStart + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    void emit(i);
  }
  await latencyDone;
  const paced = latencies.slice().sort();

  await consumer.stop();
  await producer.disconnect();
  await topics.delete();
  await deleteSubjects(topics.prefix);

  const result = {
    benchmark: 'streams.produce-consume',
    at: new Date().toISOString(),
    events: EVENTS,
    eventType: 'PageFetched',
    eventBytes,
    partitions: PARTITIONS,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverage1m: Math.round(load1 * 100) / 100,
    produceEventsPerSec: Math.round(EVENTS / ((producedAt - startedAt) / 1000)),
    endToEndEventsPerSec: Math.round(throughput),
    elapsedSec: Math.round(elapsedS * 100) / 100,
    cpuSecondsPer10kEvents: Math.round((cpuUsed / EVENTS) * 10_000 * 1000) / 1000,
    eventsPerCpuSecond: Math.round(EVENTS / cpuUsed),
    saturatedLatencyMs: { p50: percentile(saturated, 50), p99: percentile(saturated, 99) },
    latencyRatePerSec: rate,
    latencyMs: { p50: percentile(paced, 50), p90: percentile(paced, 90), p99: percentile(paced, 99), max: paced[paced.length - 1]! },
    commits: consumer.stats().commits,
    targetEventsPerSec: TARGET,
    meetsTarget: throughput >= TARGET,
  };
  const n = (x: number) => x.toLocaleString('en');
  console.log(`events          ${n(EVENTS)} × PageFetched (${eventBytes} B Avro), ${PARTITIONS} partitions, ${result.cpus} CPUs, load ${result.loadAverage1m}`);
  console.log(`produce         ${n(result.produceEventsPerSec)} events/s (acks=all, idempotent)`);
  console.log(`end to end      ${n(result.endToEndEventsPerSec)} events/s over ${result.elapsedSec} s (target ${n(TARGET)}: ${result.meetsTarget ? 'met' : 'NOT met'})`);
  console.log(`cpu             ${result.cpuSecondsPer10kEvents} s per 10k events produced+consumed = ${n(result.eventsPerCpuSecond)} events per CPU-second`);
  console.log(`latency ms      at ${n(rate)}/s: p50 ${result.latencyMs.p50}  p90 ${result.latencyMs.p90}  p99 ${result.latencyMs.p99}  max ${result.latencyMs.max}`);
  console.log(`                saturated: p50 ${result.saturatedLatencyMs.p50}  p99 ${result.saturatedLatencyMs.p99} (queueing in the producer)`);
  console.log(JSON.stringify(result));
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'streams.json'), `${JSON.stringify(result, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
