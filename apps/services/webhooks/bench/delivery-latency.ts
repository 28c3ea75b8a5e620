/**
 * `npm run bench -w @trawl/webhooks`: webhook delivery latency when 1,000 jobs complete together.
 * The service runs in this process on its own topics (6 partitions) and a throw-away database; one
 * user's subscription to job.completed, a local receiver answering 204 at once. The 1,000 jobs'
 * JobDispatched go first (the owners known, as in a crawl); then the 1,000 JobCompleted are
 * produced at once, and each delivery's latency is its arrival at the receiver minus the event's
 * `occurred_at`. Figures on stderr, JSON on stdout and in bench-results/webhooks.json.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { samples } from '@trawl/schemas';
import { createKafka, createLogger, EventCodec, EventProducer, repoRoot } from '@trawl/streams';
import { createTestTopics, deleteSubjects, testId, waitFor } from '@trawl/streams/testing';
import { migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { sealWebhookSecret, secretBoxFromEnv } from '@trawl/store/secrets';
import { createTestDatabase } from '@trawl/store/testing';
import { startWebhookService } from '../src/index.ts';
import { Receiver } from '../src/testing/receiver.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 1_000);
const logger = createLogger('webhooks-bench', { ...process.env, TRAWL_LOG_LEVEL: 'warn' });
const kafka = createKafka({ clientId: 'webhooks-bench', logger });
const topics = await createTestTopics(kafka, ['jobs', 'items', 'webhooks.retry.1', 'webhooks.retry.2', 'webhooks.dlq'], { partitions: 6 });
const db = await createTestDatabase('trawl_bench_webhooks');
const receiver = new Receiver();
const producer = new EventProducer({ kafka, logger, codec: new EventCodec() });
try {
  await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
  await receiver.start();
  process.env.TRAWL_FETCH_ALLOW = `127.0.0.1:${receiver.port}`;
  await producer.connect();
  const service = await startWebhookService({
    logger,
    pool: db.pool,
    kafka,
    topics: { jobs: topics.names.jobs!, items: topics.names.items! },
    retryTiers: [{ topic: topics.names['webhooks.retry.1']!, delayMs: 5_000 }, { topic: topics.names['webhooks.retry.2']!, delayMs: 30_000 }],
    deadLetterTopic: topics.names['webhooks.dlq']!,
    groupId: testId('g-webhooks-bench'),
  });
  await service.consumer.ready;
  const user = `bench-${randomUUID()}`;
  const secret = `secret-${randomUUID()}`;
  // Sealed, as the API stores it, under the key the service opens it with.
  const hookId = randomUUID();
  await db.pool.query('INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, $3, $4, $5)', [hookId, user, receiver.url('/hook', secret), ['job.completed'], sealWebhookSecret(secretBoxFromEnv(), hookId, secret)]);
  const { event_id: _a, occurred_at: _b, causation_id: _c, ...dispatched } = samples.JobDispatched;
  const { event_id: _d, occurred_at: _e, causation_id: _f, ...completed } = samples.JobCompleted;
  const jobs = Array.from({ length: JOBS }, () => randomUUID());
  await Promise.all(jobs.map((job) => producer.emit('JobDispatched', { ...dispatched, job_id: job, user_id: user, schedule_id: null }, { topic: topics.names.jobs! })));
  await waitFor(async () => (await db.pool.query('SELECT count(*)::int AS n FROM webhook_jobs')).rows[0].n === JOBS, { timeoutMs: 120_000, message: 'the jobs dispatched' });

  const load = loadavg()[0]!;
  const t0 = Date.now();
  await Promise.all(jobs.map((job) => producer.emit('JobCompleted', { ...completed, job_id: job }, { topic: topics.names.jobs! })));
  const produced = Date.now() - t0;
  await waitFor(() => receiver.unique('/hook').length === JOBS, { timeoutMs: 120_000, message: () => `deliveries (${receiver.unique('/hook').length}/${JOBS})` });
  const got = receiver.unique('/hook');
  const latencies = got.map((r) => r.at - Date.parse(r.body.created_at)).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
  const last = Math.max(...got.map((r) => r.at));
  const result = {
    jobs: JOBS,
    producedInMs: produced,
    latencyMs: { p50: pct(50), p90: pct(90), p99: pct(99), max: latencies.at(-1) },
    allDeliveredInMs: last - t0,
    deliveriesPerSecond: Math.round(JOBS / ((last - t0) / 1000)),
    requests: receiver.all.length,
    signaturesValid: got.every((r) => r.validSignature),
    machine: { cpus: cpus().length, loadAverage1m: Math.round(load * 100) / 100 },
    what: 'JobCompleted occurred_at → the receiver has the signed delivery; service in this process, 6 partitions, a receiver answering at once',
  };
  process.stderr.write(`\nwebhooks: ${JOBS} JobCompleted at once → p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms; all delivered in ${result.allDeliveredInMs} ms (${result.deliveriesPerSecond}/s); load ${result.machine.loadAverage1m}\n`);
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'webhooks.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  await service.stop();
} finally {
  await producer.disconnect();
  await receiver.stop();
  await db.drop();
  await topics.delete();
  await deleteSubjects(topics.prefix);
}
