/**
 * `GET /dead-letters` with 200,000 dead letters (`npm run bench:dead-letters -w @trawl/api
 * [-- --count 200000 --requests 300 --regenerate --skip-old]`).
 *
 * 1. The dead letters: FetchRequested dead letters (Avro, registered, with the retry/DLQ headers
 *    streams writes) in `bench.dead-letters.fetch.dlq` (6 partitions) plus 1% undecodable ones in
 *    `bench.dead-letters.events.dlq`, for 20 users over 200 jobs — one user owns half. Produced
 *    once and kept; later runs reuse them.
 * 2. projector-pg's dead-letter projection fills a throw-away database (its rate is printed).
 * 3. The real API (buildApp with the console mounted, as main.ts does) answers over HTTP: the heavy user's first
 *    page, 50 pages deep by cursor, pages of 500, filtered by source and by job, light users' pages,
 *    and a burst of 20 at once — latencies p50/p99 — while the API's RSS is sampled every 20 ms:
 *    growth = peak minus the RSS after start-up and one warm-up request.
 * 4. For comparison (unless `--skip-old`), in a child process, what the console did before the read
 *    model: read both topics from offset 0 and decode every message (its reader did this on every
 *    refresh after 3 s), timed, with its RSS growth.
 *
 * Figures on stderr, JSON to stdout and bench-results/dead-letters.json.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import trawlConsole from '@trawl/console';
import { samples } from '@trawl/schemas';
import { createKafka, createLogger, deadLetterFor, EventCodec, EventProducer, provisionTopics, readTopics, repoRoot, uuidv5, type RawMessage } from '@trawl/streams';
import { CONFIG_MIGRATIONS, migrate } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { setupReadModels, startDeadLetterProjector } from '@trawl/projector-pg';
import { buildApp } from '../src/app.ts';
import { createApiKey } from '../src/data/api-keys.ts';
import { API_MIGRATION_OWNER, API_MIGRATIONS } from '../src/data/migrations.ts';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '200000' },
    requests: { type: 'string', default: '300' },
    regenerate: { type: 'boolean', default: false },
    'skip-old': { type: 'boolean', default: false },
    'old-read': { type: 'boolean', default: false },
  },
});
const COUNT = Number(args.count);
const REQUESTS = Number(args.requests);
const TOPICS = { fetch: 'bench.dead-letters.fetch.dlq', events: 'bench.dead-letters.events.dlq' };
const USERS = Array.from({ length: 20 }, (_, i) => `bench-dlq-u${String(i).padStart(2, '0')}`);
const JOBS = 200;
const jobId = (j: number) => uuidv5(`bench-dead-letters:job:${j}`);
/** Jobs 0..99 are u00's (half of every dead letter); the rest spread over the other 19 users. */
const ownerOf = (j: number) => (j < JOBS / 2 ? USERS[0]! : USERS[1 + (j % (USERS.length - 1))]!);

const logger = createLogger('bench-dead-letters');
logger.level = 'warn';
/** The projection's own log: the database is dropped under its pool at the end, which it would report. */
const quiet = createLogger('bench-dead-letters-projection');
quiet.level = 'silent';
const kafka = createKafka({ clientId: 'bench-dead-letters', logger });
const say = (s: string) => process.stderr.write(`${s}\n`);
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/** The old console's read, in a process of its own: both topics from offset 0, every message decoded. */
async function oldRead(): Promise<void> {
  const codec = new EventCodec();
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const messages = await readTopics(kafka, [TOPICS.fetch, TOPICS.events]);
  let decoded = 0;
  for (const m of messages) {
    try {
      await codec.decode(m.value);
      decoded++;
    } catch {
      // undecodable: the old reader kept it for nobody
    }
  }
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  process.stdout.write(`${JSON.stringify({ messages: messages.length, decoded, seconds: Number((ms / 1000).toFixed(2)), rssGrowthMb: mb(peak - before) })}\n`);
}

async function countMessages(): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    let n = 0;
    for (const topic of Object.values(TOPICS)) {
      if (!existing.has(topic)) return 0;
      for (const p of await admin.fetchTopicOffsets(topic)) n += Number(BigInt(p.high) - BigInt(p.low));
    }
    return n;
  } finally {
    await admin.disconnect();
  }
}

async function dropTopics(): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const topics = Object.values(TOPICS).filter((t) => existing.has(t));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

/** Makes sure the bench topics hold COUNT dead letters; returns how long producing took (0: reused). */
async function ensureDeadLetters(): Promise<number> {
  if (args.regenerate) await dropTopics();
  const have = await countMessages();
  if (have >= COUNT) return 0;
  if (have > 0) await dropTopics();
  await provisionTopics(kafka, [
    { name: TOPICS.fetch, role: 'dead-letter' as const, partitions: 6, key: 'URL host', configs: {} },
    { name: TOPICS.events, role: 'dead-letter' as const, partitions: 1, key: 'job id', configs: {} },
  ]);
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec, maxBatchMessages: 5000, lingerMs: 5 });
  await producer.connect();
  const started = Date.now();
  say(`bench: producing ${COUNT.toLocaleString('en-US')} dead letters into ${Object.values(TOPICS).join(', ')} (once; later runs reuse them)`);
  const failedFrom = Date.now() - 7 * 86_400_000;
  let pending: Promise<void>[] = [];
  for (let i = 0; i < COUNT; i++) {
    let record: RawMessage;
    if (i % 100 === 99) {
      record = { topic: TOPICS.events, key: null, value: randomBytes(64), headers: { 'trawl-dead-letter-reason': 'undecodable', 'trawl-failed-at': String(failedFrom + i * 3000) } };
    } else {
      const j = (i * 7919) % JOBS;
      const url = `https://host-${i % 97}.example/p/${i}`;
      const value = await codec.encode('trawl.fetch', 'FetchRequested', { ...samples.FetchRequested, event_id: uuidv5(`bench-dead-letters:e:${i}`), job_id: jobId(j), fetch_id: uuidv5(`bench-dead-letters:f:${i}`), url });
      const error = Object.assign(new Error(`HTTP 503 from ${url}`), { name: 'HttpStatusError', code: 'HTTP_STATUS' });
      record = deadLetterFor(
        { topic: 'trawl.fetch.retry.3', partition: i % 12, offset: String(i), key: Buffer.from(`host-${i % 97}.example`), value, headers: { 'trawl-original-topic': 'trawl.fetch', 'trawl-original-partition': String(i % 12), 'trawl-original-offset': String(i) } },
        { deadLetterTopic: TOPICS.fetch, reason: 'exhausted', attempts: 4, error },
        failedFrom + i * 3000,
      ).record;
    }
    pending.push(producer.sendRaw(record));
    if (pending.length >= 5000) {
      await Promise.all(pending);
      pending = [];
      if (i % 50_000 < 5000) say(`bench: ${(i + 1).toLocaleString('en-US')} dead letters produced`);
    }
  }
  await Promise.all(pending);
  await producer.disconnect();
  return (Date.now() - started) / 1000;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const produceSeconds = await ensureDeadLetters();
  const total = await countMessages();
  const db = await createTestDatabase('trawl_bench_dlq');
  try {
    await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
    await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS);
    await setupReadModels(db.pool);
    await db.pool.query(
      `INSERT INTO jobs (job_id, user_id, status, updated_at) SELECT * FROM unnest($1::text[], $2::text[]) AS j (job_id, user_id), LATERAL (SELECT 'running', now()) s`,
      [Array.from({ length: JOBS }, (_, j) => jobId(j)), Array.from({ length: JOBS }, (_, j) => ownerOf(j))],
    );

    // 2. Project.
    const projectStarted = performance.now();
    const projection = await startDeadLetterProjector({ pool: db.pool, kafka, logger: quiet, topics: TOPICS, groupId: `bench-dead-letters-${Date.now()}`, statsLogIntervalMs: 0 });
    for (;;) {
      const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM dead_letters');
      if (rows[0]!.n >= total) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const projectSeconds = (performance.now() - projectStarted) / 1000;
    await projection.stop();
    const size = (await db.pool.query<{ mb: number }>("SELECT round(pg_total_relation_size('dead_letters') / 1048576.0)::int AS mb")).rows[0]!.mb;
    say(`projected ${total.toLocaleString('en-US')} dead letters in ${projectSeconds.toFixed(1)} s (${Math.round(total / projectSeconds).toLocaleString('en-US')}/s); dead_letters is ${size} MB`);

    // 3. Read through the real API.
    const keys = new Map<string, string>();
    for (const u of USERS) keys.set(u, (await createApiKey(db.pool, u)).key);
    const app = await buildApp({ pool: db.pool, producer: new EventProducer({ kafka, logger }), config: { rateLimitMax: 1_000_000 }, mount: (app) => app.register(trawlConsole) });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const get = async (user: string, query: string) => {
      const started = performance.now();
      const res = await fetch(`${base}/dead-letters${query}`, { headers: { authorization: `Bearer ${keys.get(user)}` } });
      const body = (await res.json()) as { dead_letters: { id: string }[]; next_cursor: string | null };
      if (res.status !== 200) throw new Error(`GET /dead-letters${query} answered ${res.status}: ${JSON.stringify(body)}`);
      return { ms: performance.now() - started, body };
    };
    await get(USERS[0]!, '');
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const latencies: Record<string, number[]> = { first_page: [], deep_pages: [], page_of_500: [], by_source: [], by_job: [], light_users: [], burst_of_20: [] };
    let deepest = 0;
    for (let round = 0; latencies.first_page!.length * 7 < REQUESTS; round++) {
      latencies.first_page!.push((await get(USERS[0]!, '')).ms);
      let cursor: string | null = null;
      for (let page = 0; page < 50; page++) {
        const r: { ms: number; body: { next_cursor: string | null } } = await get(USERS[0]!, `?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        if (page > 0) latencies.deep_pages!.push(r.ms);
        cursor = r.body.next_cursor;
        deepest = Math.max(deepest, page + 1);
        if (!cursor) break;
      }
      latencies.page_of_500!.push((await get(USERS[0]!, '?limit=500')).ms);
      latencies.by_source!.push((await get(USERS[0]!, `?source=${round % 2 ? 'fetch' : 'events'}`)).ms);
      latencies.by_job!.push((await get(USERS[0]!, `?job_id=${jobId(round % (JOBS / 2))}`)).ms);
      latencies.light_users!.push((await get(USERS[1 + (round % (USERS.length - 1))]!, '')).ms);
      const burst = await Promise.all(USERS.map((u) => get(u, '?limit=100')));
      latencies.burst_of_20!.push(...burst.map((b) => b.ms));
    }
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    await app.close();
    const all = Object.values(latencies).flat().sort((a, b) => a - b);
    const stats = Object.fromEntries(
      Object.entries(latencies).map(([k, v]) => {
        const s = [...v].sort((a, b) => a - b);
        return [k, { n: s.length, p50Ms: Number(percentile(s, 50).toFixed(1)), p99Ms: Number(percentile(s, 99).toFixed(1)) }];
      }),
    );

    // 4. The old way, for comparison.
    let old: unknown = 'skipped (--skip-old)';
    if (!args['skip-old']) {
      say('for comparison: the old console read (both topics from offset 0, every message decoded), in a child process');
      const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--old-read'], { encoding: 'utf8', maxBuffer: 1 << 20 });
      old = JSON.parse(out.trim().split('\n').at(-1)!);
    }

    const result = {
      at: new Date().toISOString(),
      machine: { cpus: availableParallelism(), loadAverage1m: Number(loadavg()[0]!.toFixed(2)) },
      deadLetters: total,
      heavyUserShare: 0.5,
      generation: produceSeconds > 0 ? { seconds: Number(produceSeconds.toFixed(1)) } : 'reused bench topics',
      projection: { seconds: Number(projectSeconds.toFixed(1)), perSecond: Math.round(total / projectSeconds), tableMb: size },
      api: {
        requests: all.length,
        p50Ms: Number(percentile(all, 50).toFixed(1)),
        p99Ms: Number(percentile(all, 99).toFixed(1)),
        maxMs: Number(all[all.length - 1]!.toFixed(1)),
        byKind: stats,
        deepestPage: deepest,
        rssBeforeMb: mb(rssBefore),
        rssGrowthMb: mb(rssPeak - rssBefore),
        passes: percentile(all, 99) < 2000 && rssPeak - rssBefore < 100 * 2 ** 20,
      },
      oldWholeTopicRead: old,
    };
    say(`GET /dead-letters over ${total.toLocaleString('en-US')} dead letters: ${all.length} requests, p50 ${result.api.p50Ms} ms, p99 ${result.api.p99Ms} ms, max ${result.api.maxMs} ms; API RSS ${result.api.rssBeforeMb} MB, growth ${result.api.rssGrowthMb} MB (pass: p99 < 2 s and growth < 100 MB: ${result.api.passes}); load ${result.machine.loadAverage1m}`);
    if (typeof old === 'object') say(`old whole-topic read: ${JSON.stringify(old)}`);
    const dir = join(repoRoot, 'bench-results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'dead-letters.json');
    const runs = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { runs?: unknown[] }).runs ?? [] : [];
    writeFileSync(file, `${JSON.stringify({ latest: result, runs: [...runs.slice(-9), result] }, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (!result.api.passes) process.exitCode = 1;
  } finally {
    await db.drop();
  }
}

if (args['old-read']) await oldRead();
else await main();
