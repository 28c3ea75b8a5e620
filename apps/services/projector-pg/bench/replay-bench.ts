/**
 * `npm run bench -w @trawl/projector-pg` (root: `npm run bench:replay`): replays ≥ 1,000,000
 * events from the bench topics into a throw-away Postgres database with replayPg — read, decode,
 * project, index, verify, swap — and reports events/s. Target: ≥ 20,000 events/s.
 * Figures on stderr, JSON merged into bench-results/replay.json under "postgres".
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import { createKafka, createLogger, EventCodec, EventProducer, repoRoot } from '@trawl/streams';
import { createTestDatabase } from '@trawl/store/testing';
import { replayPg } from '../src/replay/replay-pg.ts';
import { ensureBenchEvents, BENCH_TOPICS } from '@trawl/streams/testing';
import { samplePostgresBackends } from './cpu-sampler.ts';

const TARGET = 20_000;
const logger = createLogger('bench-replay-pg');
logger.level = 'warn';
const kafka = createKafka({ clientId: 'bench-replay-pg', logger });
const codec = new EventCodec();
const producer = new EventProducer({ kafka, logger, codec, maxBatchMessages: 5000, lingerMs: 5 });
await producer.connect();
const generated = await ensureBenchEvents(kafka, producer, { regenerate: process.argv.includes('--regenerate') });
await producer.disconnect();

const db = await createTestDatabase('trawl_bench_pg');
try {
  let last = 0;
  const phaseStarts: [string, number][] = [];
  const cpuBefore = process.cpuUsage();
  const pgCpu = samplePostgresBackends(db.pool, decodeURIComponent(new URL(db.url).pathname.slice(1)));
  const report = await replayPg({
    pool: db.pool, kafka, codec, logger, topics: BENCH_TOPICS, batchSize: 10_000,
    progress: (p) => {
      if (phaseStarts.at(-1)?.[0] !== p.phase) phaseStarts.push([p.phase, p.elapsedMs]);
      if (p.phase !== 'catch-up' || Date.now() - last > 5000) {
        last = Date.now();
        process.stderr.write(`replay pg [${p.phase}] ${p.events.toLocaleString('en-US')} events, ${Math.round(p.eventsPerSecond).toLocaleString('en-US')} events/s, lag ${p.lag.toLocaleString('en-US')}\n`);
      }
    },
  });
  const cpu = process.cpuUsage(cpuBefore);
  const postgresCpuSeconds = Number((await pgCpu.stop()).toFixed(1));
  const nodeCpuSeconds = (cpu.user + cpu.system) / 1e6;
  const phases: Record<string, number> = {};
  phaseStarts.forEach(([phase, at], i) => {
    const end = phaseStarts[i + 1]?.[1] ?? report.seconds * 1000;
    phases[phase] = Number(((phases[phase] ?? 0) + (end - at) / 1000).toFixed(1));
  });
  const sizes = await db.pool.query(`SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM job_pages)::int AS pages, (SELECT count(*) FROM job_items)::int AS items, (SELECT count(*) FROM job_log)::int AS log`);
  const result = {
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(os.totalmem() / 2 ** 30), loadAverage1m: Number(os.loadavg()[0]!.toFixed(2)) },
    events: report.events,
    seconds: Number(report.seconds.toFixed(2)),
    eventsPerSecond: Math.round(report.eventsPerSecond),
    target: TARGET,
    meetsTarget: report.eventsPerSecond >= TARGET,
    pausedMs: report.pausedMs,
    /** Seconds per phase: catch-up (read + bulk load), index (settle + keys + indexes), swap. */
    phaseSeconds: phases,
    replayNodeCpuSeconds: Number(nodeCpuSeconds.toFixed(1)),
    /** CPU seconds of the bench database's backends (the server shares the machine with other work). */
    postgresCpuSeconds,
    /**
     * Events per second if the replay had its two cores to itself: reading and writing overlap,
     * so the busier side bounds it. An estimate from CPU seconds, not a measurement.
     */
    cpuBoundEventsPerSecond: Math.round(report.events / Math.max(nodeCpuSeconds, postgresCpuSeconds)),
    verified: report.verified,
    rows: sizes.rows[0],
    generation: generated.producedNow > 0 ? { events: generated.producedNow, seconds: generated.produceSeconds, eventsPerSecond: Math.round(generated.producedNow / generated.produceSeconds) } : 'reused bench topics',
    what: 'replayPg end to end: Kafka fetch + Avro decode + bulk load into unlogged stage tables (COPY) + set-wise settle into the shadow tables + keys and indexes + checksum + swap',
  };
  process.stderr.write(`\nreplay into Postgres: ${result.events.toLocaleString('en-US')} events in ${result.seconds} s = ${result.eventsPerSecond.toLocaleString('en-US')} events/s (target ${TARGET.toLocaleString('en-US')}: ${result.meetsTarget ? 'met' : 'NOT met'}; load average ${result.machine.loadAverage1m} on ${result.machine.cpus} CPUs; phases ${JSON.stringify(phases)})\n`);
  process.stderr.write(`CPU: node ${result.replayNodeCpuSeconds} s, Postgres backends ${postgresCpuSeconds} s => about ${result.cpuBoundEventsPerSecond.toLocaleString('en-US')} events/s with two dedicated cores\n`);
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'replay.json');
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all.postgres = result;
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify({ postgres: result }, null, 2)}\n`);
} finally {
  await db.drop();
}
