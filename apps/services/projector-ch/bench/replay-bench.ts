/**
 * `npm run bench -w @trawl/projector-ch` (root: `npm run bench:replay`): replays ≥ 1,000,000
 * events from the bench topics into a throw-away ClickHouse database with replayCh — read,
 * decode, build TabSeparated, insert (the views fill the rollups), checksum, swap — and reports
 * events/s. Target: ≥ 100,000 events/s. Figures on stderr, JSON merged into
 * bench-results/replay.json under "clickhouse".
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import os from 'node:os';
import { createKafka, createLogger, endpoints, EventCodec, EventProducer, repoRoot } from '@trawl/streams';
import { replayCh } from '../src/replay/replay-ch.ts';
import { ClickHouse, ident } from '@trawl/clickhouse';
import { ensureBenchEvents, BENCH_TOPICS, BENCH_EVENTS } from '@trawl/streams/testing';
import { applySchema } from '../src/schema/analytics-schema.ts';
import { writeFacts } from '../src/projector/write-facts.ts';
import { UserMemory } from '../src/model/tsv-batch.ts';
import { inProcessBatches } from './in-process-events.ts';
import { clickhouseCpu } from './cpu-sampler.ts';

/**
 * The live projector's write path (writeFacts: position and page-id checks as ClickHouse queries,
 * events held per batch) with the same events decoded in process (no Kafka client): rows,
 * TabSeparated, inserts of 50k events with two in flight, the views. The events are generated
 * before the clock starts (their UUIDv5 ids cost more than projecting them) and held in memory,
 * whose garbage collection the figure does pay.
 */
async function inProcessApply(url: string): Promise<{ events: number; seconds: number; eventsPerSecond: number; nodeCpuSeconds: number; clickhouseCpuSeconds: number | null; cpuBoundEventsPerSecond: number | null }> {
  const mem = new ClickHouse({ url, database: `trawl_bench_mem_${randomBytes(3).toString('hex')}` });
  try {
    await applySchema(mem);
    const users = new UserMemory();
    const batches = [...inProcessBatches(BENCH_EVENTS, 50_000)];
    // Generation blocked the event loop for seconds: let pooled sockets the server closed meanwhile go.
    await mem.ping();
    await mem.ping();
    const started = performance.now();
    const cpu = process.cpuUsage();
    const server = clickhouseCpu();
    let events = 0;
    const inflight: Promise<unknown>[] = [];
    for (const batch of batches) {
      inflight.push(writeFacts(mem, batch, users, { skipStored: false }));
      events += batch.length;
      if (inflight.length >= 2) await inflight.shift();
    }
    await Promise.all(inflight);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const nodeCpuSeconds = (used.user + used.system) / 1e6;
    const clickhouseCpuSeconds = server.stop();
    return {
      events, seconds: Number(seconds.toFixed(2)), eventsPerSecond: Math.round(events / seconds), nodeCpuSeconds: Number(nodeCpuSeconds.toFixed(1)), clickhouseCpuSeconds,
      cpuBoundEventsPerSecond: clickhouseCpuSeconds === null ? null : Math.round(events / Math.max(nodeCpuSeconds, clickhouseCpuSeconds)),
    };
  } finally {
    await mem.exec(`DROP DATABASE IF EXISTS ${ident(mem.database)}`, { database: null }).catch(() => undefined);
    await mem.close();
  }
}

const TARGET = 100_000;
/** Events per insert (`--batch-size N`); replayCh's default is 50,000. */
const batchArg = process.argv.indexOf('--batch-size');
const BATCH_SIZE = batchArg > 0 ? Number(process.argv[batchArg + 1]) : 50_000;
if (!Number.isInteger(BATCH_SIZE) || BATCH_SIZE < 1) throw new Error('--batch-size wants a positive integer');
const logger = createLogger('bench-replay-ch');
logger.level = 'warn';
const kafka = createKafka({ clientId: 'bench-replay-ch', logger });
const codec = new EventCodec();
const producer = new EventProducer({ kafka, logger, codec, maxBatchMessages: 5000, lingerMs: 5 });
await producer.connect();
const generated = await ensureBenchEvents(kafka, producer, { regenerate: process.argv.includes('--regenerate') });
await producer.disconnect();

const ep = endpoints();
const database = `trawl_bench_${randomBytes(3).toString('hex')}`;
const ch = new ClickHouse({ url: ep.clickhouseUrl, database });
const cpuBefore = process.cpuUsage();
const server = clickhouseCpu();
try {
  let last = 0;
  const report = await replayCh({
    clickhouseUrl: ep.clickhouseUrl, database, databaseUrl: null, kafka, logger, topics: BENCH_TOPICS, batchSize: BATCH_SIZE,
    progress: (p) => {
      if (p.phase !== 'catch-up' || Date.now() - last > 5000) {
        last = Date.now();
        process.stderr.write(`replay ch [${p.phase}] ${p.events.toLocaleString('en-US')} events, ${Math.round(p.eventsPerSecond).toLocaleString('en-US')} events/s, lag ${p.lag.toLocaleString('en-US')}\n`);
      }
    },
  });
  const cpu = process.cpuUsage(cpuBefore);
  const clickhouseCpuSeconds = server.stop();
  const nodeCpuSeconds = (cpu.user + cpu.system) / 1e6;
  // --replay-only: the end-to-end replay alone (side-by-side runs, profiles).
  const replayOnly = process.argv.includes('--replay-only');
  if (!replayOnly) process.stderr.write('bench: the live projector\'s write path (writeFacts), with the same events decoded in process\n');
  const apply = replayOnly ? undefined : await inProcessApply(ep.clickhouseUrl);
  const result = {
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(os.totalmem() / 2 ** 30), loadAverage1m: Number(os.loadavg()[0]!.toFixed(2)) },
    events: report.events,
    seconds: Number(report.seconds.toFixed(2)),
    eventsPerSecond: Math.round(report.eventsPerSecond),
    target: TARGET,
    meetsTarget: report.eventsPerSecond >= TARGET,
    replayNodeCpuSeconds: Number(nodeCpuSeconds.toFixed(1)),
    /** CPU seconds of the ClickHouse server during the replay (it shares the machine with other work). */
    clickhouseCpuSeconds,
    /** Events per second if the replay had the cores to itself; the busier side bounds it. An estimate, not a measurement. */
    cpuBoundEventsPerSecond: clickhouseCpuSeconds === null ? null : Math.round(report.events / Math.max(nodeCpuSeconds, clickhouseCpuSeconds)),
    /** Without the Kafka client: what the live projector's write path (checks, rows, inserts, views) sustains. For comparison; the target is the replay's. */
    inProcessApply: apply ?? 'not run (--replay-only)',
    rows: Object.fromEntries(['page_fetches', 'items', 'job_events'].map((t) => [t, report.checksum[t]?.rows])),
    generation: generated.producedNow > 0 ? { events: generated.producedNow, seconds: generated.produceSeconds, eventsPerSecond: Math.round(generated.producedNow / generated.produceSeconds) } : 'reused bench topics',
    what: 'replayCh end to end: Kafka fetch + Avro decode + TabSeparated rows + HTTP inserts of 50k events (materialised views fill the rollups) + consistency checksum + RENAME swap',
  };
  process.stderr.write(`\nreplay into ClickHouse from Kafka: ${result.events.toLocaleString('en-US')} events in ${result.seconds} s = ${result.eventsPerSecond.toLocaleString('en-US')} events/s (target ${TARGET.toLocaleString('en-US')}: ${result.meetsTarget ? 'met' : 'NOT met'}; load average ${result.machine.loadAverage1m} on ${result.machine.cpus} CPUs)\n`);
  process.stderr.write(`CPU: node ${result.replayNodeCpuSeconds} s (Kafka fetch + Avro decode + rows), ClickHouse ${clickhouseCpuSeconds ?? '?'} s => about ${result.cpuBoundEventsPerSecond?.toLocaleString('en-US') ?? '?'} events/s with dedicated cores\n`);
  if (apply) process.stderr.write(`live projector's write path (events decoded in process): ${apply.events.toLocaleString('en-US')} events in ${apply.seconds} s = ${apply.eventsPerSecond.toLocaleString('en-US')} events/s; CPU: node ${apply.nodeCpuSeconds} s, ClickHouse ${apply.clickhouseCpuSeconds ?? '?'} s => about ${apply.cpuBoundEventsPerSecond?.toLocaleString('en-US') ?? '?'} events/s with dedicated cores\n`);
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'replay.json');
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all.clickhouse = result;
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify({ clickhouse: result }, null, 2)}\n`);
} finally {
  await ch.exec(`DROP DATABASE IF EXISTS ${ident(database)}`, { database: null }).catch(() => undefined);
  await ch.close();
}
