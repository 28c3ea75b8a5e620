/**
 * The Kafka clients side by side, on the local broker: kafkajs 2.2.4 with Trawl's fast paths,
 * kafkajs as released (TRAWL_KAFKAJS_FAST_PATHS=0; the restated send and request-queue timers stay,
 * they are correctness and idle-cost fixes), @platformatic/kafka, and Confluent's
 * @confluentinc/kafka-javascript (librdkafka) when it can be loaded.
 *
 *   npm run bench:clients -w @trawl/streams [-- --rounds 3 --messages 100000 --only kafkajs,platformatic]
 *
 * Each round runs every client once, in a fresh process, in an order that rotates from round to
 * round, so a machine whose load drifts favours none. A run produces BENCH messages to a topic of its
 * own (6 partitions) the way the services do — idempotent, acks=all, one send of `--batch` (1000)
 * messages in flight at a time (EventProducer's pattern), keys of 64 jobs, two headers, values of
 * 300–600 random bytes (what the Avro events weigh) — then consumes them back with a consumer group
 * from the earliest offset (from the subscription to the last message, the group's join included;
 * the time to the first message is printed beside it). It reports messages/s and the process's
 * CPU time per message (all its threads: librdkafka's native ones count too) for each phase. On a
 * shared machine messages/s measure the CPU share the process got as much as the client; CPU per
 * message is the steadier figure.
 *
 * Confluent's client is a native addon whose install downloads a prebuilt binary from GitHub, or
 * builds librdkafka with sources it downloads; neither reaches here (streams/README.md, "Kafka
 * client"). It is loaded from BENCH_CONFLUENT_DIR (a folder whose node_modules holds a build of it)
 * or from the usual resolution; without one that loads, its row says why.
 *
 * Topics (`test.<run id>.*`) and groups are created for the run and deleted after it. Prints each
 * run, medians with the load average, and one JSON line; writes bench-results/streams-clients.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { endpoints } from '@trawl/base';

const PARTITIONS = 6;
const KEYS = 64;
const CHILD = process.env.BENCH_CLIENT;

interface Variant {
  readonly id: string;
  readonly label: string;
  readonly env?: Readonly<Record<string, string>>;
}

const VARIANTS: readonly Variant[] = [
  { id: 'kafkajs-fast', label: 'kafkajs + fast paths', env: { TRAWL_KAFKAJS_FAST_PATHS: '1' } },
  { id: 'kafkajs', label: 'kafkajs as released', env: { TRAWL_KAFKAJS_FAST_PATHS: '0' } },
  { id: 'platformatic', label: '@platformatic/kafka' },
  { id: 'confluent', label: '@confluentinc/kafka-javascript' },
];

/** What one run measured. */
interface Run {
  readonly client: string;
  readonly version: string;
  readonly messages: number;
  readonly produceMsgPerSec: number;
  readonly produceCpuUsPerMsg: number;
  readonly consumeMsgPerSec: number;
  readonly consumeCpuUsPerMsg: number;
  /** From the subscription to the first message: the group's join and the first fetch. */
  readonly firstMessageMs: number;
  readonly load1m: number;
}

interface Job {
  readonly topic: string;
  readonly groupId: string;
  readonly messages: number;
  readonly batch: number;
  readonly brokers: string[];
}

// ---- what every client produces: the same keys, headers and values ----

/** Deterministic pseudo-random numbers (mulberry32), so every client sends the same bytes. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Payload {
  readonly key: Buffer;
  readonly value: Buffer;
  readonly headers: Record<string, Buffer>;
}

function payloads(): Payload[] {
  const next = prng(34);
  return Array.from({ length: 256 }, (_, i) => {
    const value = Buffer.alloc(300 + Math.floor(next() * 301));
    for (let j = 0; j < value.length; j++) value[j] = Math.floor(next() * 256);
    const trace = `00-${value.subarray(0, 16).toString('hex')}-${value.subarray(16, 24).toString('hex')}-01`;
    return { key: Buffer.from(`job-${i % KEYS}`), value, headers: { 'trawl-event': Buffer.from('PageFetched'), traceparent: Buffer.from(trace) } };
  });
}

const cpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/** The common shape of a run: produce in sequential batches, then consume until every message came back. */
async function measure(
  job: Job,
  client: { version: string; send(batch: Payload[]): Promise<void>; consume(onMessages: (n: number) => void): Promise<() => Promise<void>>; close(): Promise<void> },
): Promise<Omit<Run, 'client'>> {
  const all = payloads();
  const batches = Math.ceil(job.messages / job.batch);
  let cpu = cpuSeconds();
  let started = performance.now();
  for (let b = 0; b < batches; b++) {
    const size = Math.min(job.batch, job.messages - b * job.batch);
    const batch = new Array<Payload>(size);
    // A fresh message object each time, as a service makes one per event (Confluent's send also rewrites its headers field).
    for (let i = 0; i < size; i++) batch[i] = { ...all[(b * job.batch + i) % all.length]! };
    await client.send(batch);
  }
  const produceS = (performance.now() - started) / 1000;
  const produceCpu = cpuSeconds() - cpu;

  cpu = cpuSeconds();
  started = performance.now();
  let consumed = 0;
  let first = 0;
  let last = 0;
  let done!: () => void;
  const allIn = new Promise<void>((resolve) => (done = resolve));
  const stop = await client.consume((n) => {
    const now = performance.now();
    if (consumed === 0) first = now;
    consumed += n;
    last = now;
    if (consumed >= job.messages) done();
  });
  const timeout = setTimeout(() => done(), 180_000);
  await allIn;
  clearTimeout(timeout);
  const consumeCpu = cpuSeconds() - cpu;
  if (consumed < job.messages) throw new Error(`consumed ${consumed} of ${job.messages} in 180 s`);
  await stop();
  await client.close();
  // From the subscription to the last message, the group's join included: a client that decodes a
  // whole fetch before handing out its first message would look faster from its first message on.
  const consumeS = (last - started) / 1000;
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    version: client.version,
    messages: job.messages,
    produceMsgPerSec: Math.round(job.messages / produceS),
    produceCpuUsPerMsg: r((produceCpu / job.messages) * 1e6),
    consumeMsgPerSec: Math.round(job.messages / consumeS),
    consumeCpuUsPerMsg: r((consumeCpu / job.messages) * 1e6),
    firstMessageMs: Math.round(first - started),
    load1m: Math.round(loadavg()[0]! * 100) / 100,
  };
}

// ---- the clients ----

async function runKafkajs(job: Job): Promise<Omit<Run, 'client'>> {
  // The streams runtime's own loading: fast paths (unless switched off), restated send and timers.
  const { Kafka, logLevel } = await import('../src/kafka/kafkajs.ts');
  const { keyedPartitioner } = await import('../src/kafka/keyed-partitioner.ts');
  const { EVENT_DELIVERY } = await import('../src/producer/delivery.ts');
  const require = createRequire(import.meta.url);
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  const kafka = new Kafka({ clientId: 'bench-clients', brokers: job.brokers, logLevel: logLevel.WARN });
  const producer = kafka.producer({ idempotent: EVENT_DELIVERY.idempotent, maxInFlightRequests: EVENT_DELIVERY.maxInFlightRequests, allowAutoTopicCreation: false, createPartitioner: keyedPartitioner() });
  await producer.connect();
  const consumer = kafka.consumer({ groupId: job.groupId });
  return measure(job, {
    version: (require('kafkajs/package.json') as { version: string }).version,
    send: async (batch) => {
      await producer.sendBatch({ acks: EVENT_DELIVERY.acks, topicMessages: [{ topic: job.topic, messages: batch }] });
    },
    consume: async (onMessages) => {
      await consumer.connect();
      await consumer.subscribe({ topics: [job.topic], fromBeginning: true });
      await consumer.run({
        eachBatch: async ({ batch }) => {
          let bytes = 0;
          for (const m of batch.messages) bytes += m.value?.length ?? 0;
          if (bytes > 0) onMessages(batch.messages.length);
        },
      });
      return () => consumer.disconnect();
    },
    close: () => producer.disconnect(),
  });
}

async function runPlatformatic(job: Job): Promise<Omit<Run, 'client'>> {
  const { Consumer, MessagesStreamModes, ProduceAcks, Producer } = await import('@platformatic/kafka');
  const require = createRequire(import.meta.url);
  const producer = new Producer({ clientId: 'bench-clients', bootstrapBrokers: job.brokers, idempotent: true, acks: ProduceAcks.ALL, autocreateTopics: false });
  const consumer = new Consumer({ clientId: 'bench-clients', bootstrapBrokers: job.brokers, groupId: job.groupId });
  return measure(job, {
    // Its `exports` hides package.json: read the one beside its entry's dist/ folder.
    version: (JSON.parse(readFileSync(join(dirname(require.resolve('@platformatic/kafka')), '..', 'package.json'), 'utf8')) as { version: string }).version,
    send: async (batch) => {
      // Header keys are Buffers to its default serializers: a Record's string keys fail the send
      // (and an idempotent producer then retries it for ever).
      await producer.send({ messages: batch.map((p) => ({ topic: job.topic, key: p.key, value: p.value, headers: new Map(Object.entries(p.headers).map(([k, v]) => [Buffer.from(k), v])) })) });
    },
    consume: async (onMessages) => {
      const stream = await consumer.consume({ topics: [job.topic], mode: MessagesStreamModes.EARLIEST, autocommit: true });
      stream.on('data', (m: { value?: Buffer }) => {
        if ((m.value?.length ?? 0) > 0) onMessages(1);
      });
      return async () => {
        await stream.close();
        await consumer.close();
      };
    },
    close: () => producer.close(),
  });
}

/** Confluent's client: its own KafkaJS-shaped API over librdkafka. */
interface ConfluentModule {
  KafkaJS: {
    Kafka: new (config: object) => {
      producer(config: object): { connect(): Promise<void>; send(r: object): Promise<unknown>; disconnect(): Promise<void> };
      consumer(config: object): {
        connect(): Promise<void>;
        subscribe(s: object): Promise<void>;
        run(r: { eachBatch(p: { batch: { messages: { value: Buffer | null }[] } }): Promise<void> }): Promise<void>;
        disconnect(): Promise<void>;
      };
    };
  };
}

/**
 * Not a dependency, so named by a constant rather than imported: its install cannot succeed from
 * the npm registry alone (README, "Kafka client"), and `npm ci` would fail with it declared. It is
 * loaded only where it was built by hand.
 */
const CONFLUENT = '@confluentinc/kafka-javascript';

function confluentRequire(): NodeJS.Require {
  const dir = process.env.BENCH_CONFLUENT_DIR;
  return createRequire(dir ? join(dir, 'package.json') : import.meta.url);
}

async function runConfluent(job: Job): Promise<Omit<Run, 'client'>> {
  const require = confluentRequire();
  const { KafkaJS } = require(CONFLUENT) as ConfluentModule;
  const kafka = new KafkaJS.Kafka({ kafkaJS: { clientId: 'bench-clients', brokers: job.brokers, logLevel: 1 } });
  const producer = kafka.producer({ kafkaJS: { idempotent: true, acks: -1 } });
  await producer.connect();
  const consumer = kafka.consumer({ kafkaJS: { groupId: job.groupId, fromBeginning: true } });
  return measure(job, {
    version: (require(`${CONFLUENT}/package.json`) as { version: string }).version,
    send: async (batch) => {
      await producer.send({ topic: job.topic, messages: batch });
    },
    consume: async (onMessages) => {
      await consumer.connect();
      await consumer.subscribe({ topics: [job.topic] });
      await consumer.run({
        eachBatch: async ({ batch }) => {
          let bytes = 0;
          for (const m of batch.messages) bytes += m.value?.length ?? 0;
          if (bytes > 0) onMessages(batch.messages.length);
        },
      });
      return () => consumer.disconnect();
    },
    close: () => producer.disconnect(),
  });
}

/** Why a client cannot run here, or undefined when it can. */
function unavailable(id: string): string | undefined {
  if (id !== 'confluent') return undefined;
  try {
    confluentRequire()(CONFLUENT);
    return undefined;
  } catch (e) {
    const first = (e as Error).message.split('\n')[0]!;
    return `cannot load (${first}); its install needs GitHub or a librdkafka build (streams/README.md, "Kafka client"); set BENCH_CONFLUENT_DIR to a folder where it is built`;
  }
}

// ---- the orchestration ----

function runChild(v: Variant, job: Job): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename], {
      env: { ...process.env, ...v.env, BENCH_CLIENT: v.id, BENCH_JOB: JSON.stringify(job) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{"client"'));
      if (code !== 0 || !line) reject(new Error(`${v.label}: run failed (exit ${code}):\n${out}`));
      else resolve(JSON.parse(line) as Run);
    });
  });
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      messages: { type: 'string', default: '100000' },
      batch: { type: 'string', default: '1000' },
      only: { type: 'string' },
    },
  });
  const rounds = Number(values.rounds);
  const messages = Number(values.messages);
  const batch = Number(values.batch);
  const only = values.only?.split(',');
  const wanted = VARIANTS.filter((v) => !only || only.some((o) => v.id.startsWith(o)));
  const skipped = new Map<string, string>();
  for (const v of wanted) {
    const why = unavailable(v.id);
    if (why) skipped.set(v.id, why);
  }
  const variants = wanted.filter((v) => !skipped.has(v.id));

  const { createTestTopics, requireStack, testId, testKafka, testLogger } = await import('@trawl/streams/testing');
  await requireStack({ kafka: true, registry: false, postgres: false });
  const kafka = testKafka('bench-clients', testLogger('bench-clients'));
  const runId = testId('clients');
  const specs = variants.flatMap((v) => Array.from({ length: rounds }, (_, r) => ({ name: `${v.id}.${r}`, partitions: PARTITIONS })));
  const topics = await createTestTopics(kafka, specs, { runId });
  const groups: string[] = [];
  const runs = new Map<string, Run[]>(variants.map((v) => [v.id, []]));
  const loadStart = loadavg();
  const log = (s: string) => process.stderr.write(`${s}\n`);
  log(`${messages.toLocaleString('en')} messages a run, batches of ${batch}, ${PARTITIONS} partitions, ${rounds} rounds; load ${loadStart.map((l) => l.toFixed(2)).join(' ')}`);
  for (const [id, why] of skipped) log(`skipped ${id}: ${why}`);
  try {
    for (let round = 0; round < rounds; round++) {
      // Rotate the order: each client goes first in some round.
      const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
      for (const v of order) {
        const groupId = `${topics.prefix}${v.id}.${round}.g`;
        groups.push(groupId);
        const run = await runChild(v, { topic: topics.names[`${v.id}.${round}`]!, groupId, messages, batch, brokers: [...endpoints().kafkaBrokers] });
        runs.get(v.id)!.push(run);
        log(
          `round ${round + 1}/${rounds}  ${v.label.padEnd(32)} produce ${run.produceMsgPerSec.toLocaleString('en').padStart(7)}/s ${String(run.produceCpuUsPerMsg).padStart(6)} µs CPU/msg` +
            `   consume ${run.consumeMsgPerSec.toLocaleString('en').padStart(7)}/s ${String(run.consumeCpuUsPerMsg).padStart(6)} µs CPU/msg (first after ${run.firstMessageMs} ms)   load ${run.load1m}`,
        );
      }
    }
  } finally {
    await topics.delete();
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteGroups(groups).catch(() => {});
    await admin.disconnect();
  }

  const summary = variants.map((v) => {
    const rs = runs.get(v.id)!;
    const m = (k: keyof Run) => median(rs.map((r) => r[k] as number));
    return {
      client: v.label,
      version: rs[0]!.version,
      produceMsgPerSec: m('produceMsgPerSec'),
      produceCpuUsPerMsg: m('produceCpuUsPerMsg'),
      consumeMsgPerSec: m('consumeMsgPerSec'),
      consumeCpuUsPerMsg: m('consumeCpuUsPerMsg'),
      firstMessageMs: m('firstMessageMs'),
      load1m: m('load1m'),
    };
  });
  const n = (x: number) => x.toLocaleString('en');
  console.log(`\nmedians of ${rounds} rounds, ${n(messages)} messages of 300–600 B, ${availableParallelism()} CPUs, load (1 min) ${loadStart[0]!.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end`);
  console.log(`${'client'.padEnd(40)} ${'produce/s'.padStart(10)} ${'µs CPU/msg'.padStart(11)} ${'consume/s'.padStart(10)} ${'µs CPU/msg'.padStart(11)} ${'1st msg ms'.padStart(11)}`);
  for (const s of summary) {
    console.log(`${`${s.client} ${s.version}`.padEnd(40)} ${n(s.produceMsgPerSec).padStart(10)} ${String(s.produceCpuUsPerMsg).padStart(11)} ${n(s.consumeMsgPerSec).padStart(10)} ${String(s.consumeCpuUsPerMsg).padStart(11)} ${String(s.firstMessageMs).padStart(11)}`);
  }
  for (const [id, why] of skipped) console.log(`${VARIANTS.find((v) => v.id === id)!.label}: not measured: ${why}`);
  const result = {
    benchmark: 'streams.clients',
    at: new Date().toISOString(),
    messages,
    batch,
    partitions: PARTITIONS,
    rounds,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverage1m: { start: loadStart[0], end: loadavg()[0] },
    clients: summary,
    runs: Object.fromEntries(runs),
    skipped: Object.fromEntries(skipped),
  };
  console.log(JSON.stringify(result));
  const { repoRoot } = await import('@trawl/streams');
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'streams-clients.json'), `${JSON.stringify(result, null, 2)}\n`);
}

async function child(id: string): Promise<void> {
  const job = JSON.parse(process.env.BENCH_JOB!) as Job;
  const run = id === 'platformatic' ? runPlatformatic : id === 'confluent' ? runConfluent : runKafkajs;
  const result = await run(job);
  console.log(JSON.stringify({ client: id, ...result }));
}

(CHILD ? child(CHILD) : main()).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
