/**
 * Webhooks survive a SIGKILL of their service mid-delivery: the service runs as its own process
 * (compiled, as `trawl up` runs it) and is killed while a slow receiver holds deliveries in
 * flight; a new process takes over. Every event reaches the receiver (at least once), each job's
 * `job.started` before its `job.completed`, every item in some batch, and a receiver that
 * de-duplicates by `Idempotency-Key` sees each event once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { sealWebhookSecret, secretBoxFromEnv } from '@trawl/store/secrets';
import { waitFor } from '@trawl/streams/testing';
import { Receiver } from '@trawl/webhooks/testing';
import { Pipeline } from '../src/pipeline.ts';

const JOBS = 20;
const ITEMS_PER_JOB = 5;
const receiver = new Receiver();
let pipeline: Pipeline | undefined;

afterAll(async () => {
  await pipeline?.stop();
  await receiver.stop();
});

const { event_id: _a, occurred_at: _b, causation_id: _c, ...dispatched } = samples.JobDispatched;
const { event_id: _d, occurred_at: _e, causation_id: _f, ...completed } = samples.JobCompleted;
const { event_id: _g, occurred_at: _h, causation_id: _i, ...item } = samples.ItemExtracted;

describe('webhooks under SIGKILL', () => {
  it('a webhook service killed mid-delivery loses no delivery; the receiver de-duplicates the repeats by idempotency key', async () => {
    await receiver.start();
    receiver.delayMs = 250;
    const p = (pipeline = await Pipeline.start({
      env: {
        TRAWL_FETCH_ALLOW: `127.0.0.1:${receiver.port}`,
        TRAWL_WEBHOOK_RETRY_DELAYS_MS: '1000,2000,4000,8000',
        TRAWL_WEBHOOK_ITEMS_WINDOW_MS: '300',
        TRAWL_SESSION_TIMEOUT_MS: '6000',
      },
    }));
    const first = p.spawn('webhooks');
    await waitFor(async () => {
      p.checkChildren();
      return (await p.db.pool.query("SELECT to_regclass('webhooks') AS t")).rows[0].t;
    }, { timeoutMs: 60_000, message: 'the webhook tables' });
    const user = `kill-${randomUUID()}`;
    const secret = `secret-${randomUUID()}`;
    // Sealed, as the API stores it, under the key the spawned service reads (stack.env).
    const hookId = randomUUID();
    await p.db.pool.query('INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, $3, $4, $5)', [
      hookId, user, receiver.url('/hook', secret), ['job.started', 'job.completed', 'items.extracted'], sealWebhookSecret(secretBoxFromEnv(), hookId, secret),
    ]);

    const expectedEvents = new Set<string>();
    const expectedItems = new Set<string>();
    const jobs = Array.from({ length: JOBS }, () => randomUUID());
    for (const job of jobs) expectedEvents.add(await p.producer.emit('JobDispatched', { ...dispatched, job_id: job, user_id: user, schedule_id: null }, { topic: p.topics.jobs }));
    for (const job of jobs) {
      for (let i = 0; i < ITEMS_PER_JOB; i++) {
        expectedItems.add(await p.producer.emit('ItemExtracted', { ...item, job_id: job, fetch_id: randomUUID(), item_key: `k${i}`, url: `https://shop.example/${i}`, fields: { n: String(i) } }, { topic: p.topics.items }));
      }
    }
    for (const job of jobs) expectedEvents.add(await p.producer.emit('JobCompleted', { ...completed, job_id: job }, { topic: p.topics.jobs }));

    await waitFor(() => receiver.all.length >= 10, { timeoutMs: 60_000, message: 'deliveries under way' });
    await p.kill(first);
    const killedAt = receiver.all.length;
    p.spawn('webhooks');

    const jobEvents = () => receiver.unique('/hook').filter((r) => r.body.type.startsWith('job.'));
    const itemsSeen = () => new Set(receiver.unique('/hook').filter((r) => r.body.type === 'items.extracted').flatMap((r) => (r.body.data.items as { id: string }[]).map((i) => i.id)));
    await waitFor(() => jobEvents().length === expectedEvents.size && itemsSeen().size === expectedItems.size, {
      timeoutMs: 120_000,
      message: () => `every delivery (${jobEvents().length}/${expectedEvents.size} job events, ${itemsSeen().size}/${expectedItems.size} items)`,
    });
    expect(new Set(jobEvents().map((r) => r.body.id))).toEqual(expectedEvents);
    expect(itemsSeen()).toEqual(expectedItems);
    expect(receiver.all.every((r) => r.validSignature && r.idempotencyKey === r.body.id)).toBe(true);
    for (const job of jobs) expect(jobEvents().filter((r) => r.body.job_id === job).map((r) => r.body.type)).toEqual(['job.started', 'job.completed']);
    await waitFor(async () => (await p.db.pool.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'")).rows[0].n === 0, { message: 'every row delivered' });
    const repeats = receiver.all.length - receiver.unique('/hook').length;
    p.logger.info({ requests: receiver.all.length, unique: receiver.unique('/hook').length, repeats, beforeKill: killedAt }, 'webhooks under SIGKILL');
    expect(killedAt).toBeLessThan(receiver.unique('/hook').length);
  });
});
