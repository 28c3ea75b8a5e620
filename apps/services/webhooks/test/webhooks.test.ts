/**
 * The webhooks service against the real stack and a real HTTP receiver (src/testing/receiver.ts)
 * that verifies every signature: events go to the matching subscriptions once each, signed; a
 * receiver that was down gets everything, a job's events in order; one that always fails ends in
 * the deliveries' dead-letter topic and a re-delivery then reaches it; an address the egress rules
 * forbid is refused at delivery. Retry tiers are shortened to 1, 2, 4, 8, 16 s (31 s in all).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples, type PageChanged } from '@trawl/schemas';
import { readTopics, TRAWL_HEADERS } from '@trawl/streams';
import { waitFor } from '@trawl/streams/testing';
import { fetchId } from '@trawl/crawl';
import { WebhookHarness } from './support/webhook-harness.ts';

// Five tiers (31 s in all): an 8 s outage ends well inside them even for a job's later event, which
// spends tiers while it waits behind the job's earlier one.
const DELAYS = [1_000, 2_000, 4_000, 8_000, 16_000];
const harness = new WebhookHarness('webhooks', DELAYS, { timeoutMs: 2_000, itemsWindowMs: 300, itemsMax: 500, itemsMaxBytes: 1_000_000, pollMs: 200 });
const { receiver, kafka, codec } = harness;
const subscribe = harness.subscribe.bind(harness);
const started = harness.started.bind(harness);
const ended = harness.ended.bind(harness);
const rows = harness.rows.bind(harness);

const { event_id: _a, occurred_at: _b, causation_id: _c, ...dispatched } = samples.JobDispatched;
const { event_id: _g, occurred_at: _h, causation_id: _i, ...item } = samples.ItemExtracted;

async function extracted(jobId: string, n: number): Promise<string[]> {
  return Promise.all(Array.from({ length: n }, (_, i) =>
    harness.producer.emit('ItemExtracted', { ...item, job_id: jobId, fetch_id: randomUUID(), item_key: `k${i}`, url: `https://shop.example/p/${i}`, fields: { title: `item ${i}` } }, { topic: harness.topics.names.items! })));
}

beforeAll(() => harness.start(), 90_000);
afterAll(() => harness.stop());

describe('webhook deliveries', () => {
  it('delivers every event once per matching subscription, signed; items batched per job; other users and jobs filtered out', async () => {
    const alice = `alice-${randomUUID()}`;
    const bob = `bob-${randomUUID()}`;
    const job = randomUUID();
    const other = randomUUID();
    const bobJob = randomUUID();
    await subscribe(alice, '/alice-all', ['job.started', 'job.completed', 'job.cancelled', 'items.extracted']);
    await subscribe(alice, '/alice-done', ['job.completed'], { job_id: job });
    await subscribe(bob, '/bob', ['job.started', 'job.completed']);

    const startedId = await started(job, alice);
    const itemIds = await extracted(job, 5);
    const endedId = await ended(job);
    await started(other, alice);
    const otherEnd = await ended(other, 'cancelled');
    await started(bobJob, bob);
    await ended(bobJob);

    await waitFor(() => receiver.unique('/alice-all').length === 5 && receiver.unique('/alice-done').length === 1 && receiver.unique('/bob').length === 2, {
      message: () => `deliveries (${receiver.all.map((r) => `${r.path} ${r.body.type}`).join(', ')})`,
    });
    await new Promise((r) => setTimeout(r, 1_000));
    for (const path of ['/alice-all', '/alice-done', '/bob']) {
      const got = receiver.all.filter((r) => r.path === path);
      expect(got.every((r) => r.validSignature), path).toBe(true);
      expect(got.every((r) => r.idempotencyKey === r.body.id), path).toBe(true);
      expect(got.length, `${path}: nothing twice`).toBe(receiver.unique(path).length);
    }
    const all = receiver.unique('/alice-all');
    const ofJob = all.filter((r) => r.body.job_id === job);
    expect(ofJob.filter((r) => r.body.type.startsWith('job.')).map((r) => [r.body.type, r.body.id])).toEqual([['job.started', startedId], ['job.completed', endedId]]);
    const batches = ofJob.filter((r) => r.body.type === 'items.extracted');
    expect(batches).toHaveLength(1);
    expect((batches[0]!.body.data.items as { id: string }[]).map((i) => i.id).sort()).toEqual([...itemIds].sort());
    expect(batches[0]!.body.data.count).toBe(5);
    expect(all.find((r) => r.body.job_id === other && r.body.type === 'job.cancelled')?.body.id).toBe(otherEnd);
    expect(receiver.unique('/alice-done').map((r) => [r.body.type, r.body.job_id])).toEqual([['job.completed', job]]);
    expect(receiver.unique('/bob').every((r) => r.body.job_id === bobJob)).toBe(true);
  });

  it("items read before their job's JobDispatched wait for it (retry tiers) instead of being dropped", async () => {
    const frank = `frank-${randomUUID()}`;
    await subscribe(frank, '/frank', ['items.extracted', 'job.started']);
    const job = randomUUID();
    const retriedBefore = harness.service.consumer.stats().retried;
    const itemIds = await extracted(job, 3);
    await waitFor(() => harness.service.consumer.stats().retried >= retriedBefore + 3, { message: 'the items sent to a retry tier' });
    await started(job, frank);
    await waitFor(() => new Set(receiver.unique('/frank').filter((r) => r.body.type === 'items.extracted').flatMap((r) => (r.body.data.items as { id: string }[]).map((i) => i.id))).size === 3, {
      timeoutMs: 20_000, message: 'the early items',
    });
    const got = receiver.unique('/frank').filter((r) => r.body.type === 'items.extracted').flatMap((r) => (r.body.data.items as { id: string }[]).map((i) => i.id));
    expect(got.sort()).toEqual([...itemIds].sort());
  });

  it('events of a job without an owner (a seeded schedule) are settled at once, not retried as "owner not known yet"', async () => {
    const ivy = `ivy-${randomUUID()}`;
    await subscribe(ivy, '/ivy', ['items.extracted', 'job.completed']);
    const job = randomUUID();
    const before = harness.service.consumer.stats();
    await harness.producer.emit('JobDispatched', { ...dispatched, job_id: job, user_id: null, schedule_id: null }, { topic: harness.topics.names.jobs! });
    await waitFor(async () => (await harness.db.pool.query('SELECT 1 FROM webhook_jobs WHERE job_id = $1 AND user_id IS NULL', [job])).rowCount === 1, { message: 'the ownerless job known' });
    await extracted(job, 3);
    await ended(job);
    await waitFor(() => harness.service.consumer.stats().processed >= before.processed + 5, { timeoutMs: 20_000, message: 'the job\'s five events handled' });
    expect(harness.service.consumer.stats().retried).toBe(before.retried);
    expect(receiver.unique('/ivy')).toEqual([]);
  });

  it('a receiver down for 8 s gets every delivery once it is back, each job\'s events in log order', async () => {
    const carol = `carol-${randomUUID()}`;
    const hook = await subscribe(carol, '/carol', ['job.started', 'job.completed']);
    const jobs = [randomUUID(), randomUUID(), randomUUID()];
    const port = receiver.port;
    await receiver.stop();
    const downAt = Date.now();
    for (const j of jobs) await started(j, carol);
    for (const j of jobs) await ended(j);
    await waitFor(async () => (await rows(hook)).filter((r) => r.status === 'retrying').length === 6, { message: 'six deliveries retrying' });
    const waiting = await rows(hook);
    expect(waiting.filter((r) => r.type === 'job.completed').every((r) => /waiting for delivery/.test(r.last_error ?? '') && r.attempts === 0)).toBe(true);
    expect(waiting.every((r) => r.next_attempt_at !== null)).toBe(true);
    await new Promise((r) => setTimeout(r, Math.max(0, 8_000 - (Date.now() - downAt))));
    await receiver.start(port);
    const backAt = Date.now();
    await waitFor(() => receiver.unique('/carol').length === 6, { timeoutMs: 60_000, message: 'all six after the outage' });
    const got = receiver.unique('/carol');
    expect(got.every((r) => r.validSignature && r.at >= backAt)).toBe(true);
    for (const j of jobs) expect(got.filter((r) => r.body.job_id === j).map((r) => r.body.type)).toEqual(['job.started', 'job.completed']);
    await waitFor(async () => (await rows(hook)).every((r) => r.status === 'delivered'), { message: 'rows delivered' });
    expect((await rows(hook)).filter((r) => r.type === 'job.started').every((r) => r.attempts > 1)).toBe(true);
  });

  it('a receiver that always fails: retried through every tier, dead-lettered, marked failed; a re-delivery then reaches it', async () => {
    const dave = `dave-${randomUUID()}`;
    const hook = await subscribe(dave, '/dave', ['job.completed']);
    receiver.failing.add('/dave');
    const job = randomUUID();
    await started(job, dave);
    const endId = await ended(job);
    await waitFor(async () => (await rows(hook))[0]?.status === 'failed', { timeoutMs: 90_000, message: 'the delivery failed for good' });
    const [failed] = await rows(hook);
    expect(failed).toMatchObject({ type: 'job.completed', attempts: DELAYS.length + 1, next_attempt_at: null });
    expect(failed!.last_error).toMatch(/receiver answered 500.*dead-lettered \(exhausted\)/);
    expect(receiver.all.filter((r) => r.path === '/dave')).toHaveLength(DELAYS.length + 1);
    const dlq = await readTopics(kafka, [harness.topics.names['webhooks.dlq']!]);
    const dead = await Promise.all(dlq.map(async (m) => ({ reason: String(m.headers[TRAWL_HEADERS.deadLetterReason]), event: await codec.decode(m.value) })));
    expect(dead.filter((d) => d.event.value.event_id === endId).map((d) => d.reason)).toEqual(['exhausted']);

    receiver.failing.delete('/dave');
    const { rows: [{ id }] } = await harness.db.pool.query("UPDATE webhook_deliveries SET status = 'requested' WHERE webhook_id = $1 RETURNING id", [hook]);
    await waitFor(async () => (await rows(hook))[0]?.status === 'delivered', { message: 'the re-delivery' });
    const last = receiver.all.filter((r) => r.path === '/dave').at(-1)!;
    expect(last).toMatchObject({ validSignature: true, idempotencyKey: endId });
    expect(last.body.id).toBe(endId);
    expect(id).toBeTruthy();
  });

  it('a subscription made within the millisecond of an event gets it (event times have milliseconds, created_at microseconds)', async () => {
    const fay = `fay-${randomUUID()}`;
    const hook = await subscribe(fay, '/fay', ['job.started']);
    await harness.db.pool.query("UPDATE webhooks SET created_at = '2026-01-01 00:00:00.123456+00' WHERE id = $1", [hook]);
    const job = randomUUID();
    const id = await harness.producer.emit('JobDispatched', { ...dispatched, job_id: job, user_id: fay, schedule_id: null }, {
      topic: harness.topics.names.jobs!, occurredAt: new Date('2026-01-01T00:00:00.123Z'),
    });
    await waitFor(() => receiver.unique('/fay').length === 1, { message: 'the delivery' });
    expect(receiver.unique('/fay')[0]!.body.id).toBe(id);
  });

  it('refuses a private address, or a loopback port the allow-list does not open, at delivery, without retrying', async () => {
    const erin = `erin-${randomUUID()}`;
    const privateHook = await subscribe(erin, '/unused-1', ['job.started'], { url: 'http://10.20.30.40/hook' });
    const otherPort = await subscribe(erin, '/unused-2', ['job.started'], { url: `http://127.0.0.1:${receiver.port + 1}/hook` });
    await started(randomUUID(), erin);
    for (const hook of [privateHook, otherPort]) {
      await waitFor(async () => (await rows(hook))[0]?.status === 'failed', { message: 'refused' });
      const [r] = await rows(hook);
      expect(r).toMatchObject({ attempts: 1, next_attempt_at: null });
      expect(r!.last_error).toMatch(/TRAWL_UNSAFE_ADDRESS/);
      // What the tenant reads in its deliveries names no range nor allow-list: the service's log does.
      expect(r!.last_error).toBe('refused: the address is not allowed (TRAWL_UNSAFE_ADDRESS)');
    }
  });
});

describe('page.changed', () => {
  const SITE = 'https://watch.example';
  const { event_id: _j, occurred_at: _k, causation_id: _l, ...page } = samples.PageFetched;
  const at = (s: number) => new Date(Date.now() - 3_600_000 + s * 1000);

  /** A run of a schedule in projector-pg's read model, with its pages (path → content hash). */
  async function seedRun(schedule: string, user: string, run: { status: 'finished' | 'running'; dispatched: number; ended?: number; pages?: Record<string, string>; urlsSeen?: number }): Promise<string> {
    const job = randomUUID();
    const pages = Object.entries(run.pages ?? {});
    await harness.db.pool.query(
      `INSERT INTO jobs (job_id, user_id, schedule_id, status, dispatched_at, finished_at, completed_urls_seen, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
      [job, user, schedule, run.status, at(run.dispatched), run.ended === undefined ? null : at(run.ended), run.status === 'finished' ? (run.urlsSeen ?? pages.length) : null],
    );
    for (const [path, hash] of pages) await seedPage(job, path, hash, run.dispatched);
    return job;
  }
  async function seedPage(job: string, path: string, hash: string, s: number): Promise<void> {
    const url = `${SITE}${path}`;
    await harness.db.pool.query(
      `INSERT INTO job_pages (job_id, fetch_id, url, status, depth, render_mode, ok, fetched_at, event_id, content_hash) VALUES ($1, $2, $3, 200, 0, 'http', true, $4, $5, $6)`,
      [job, fetchId(job, url), url, at(s), randomUUID(), hash],
    );
  }
  async function fetched(job: string, path: string, hash: string | null): Promise<string> {
    const url = `${SITE}${path}`;
    return harness.producer.emit('PageFetched', { ...page, job_id: job, fetch_id: fetchId(job, url), url, final_url: url, content_hash: hash }, { topic: harness.topics.names.pages! });
  }
  async function pageChangedEvents(job: string) {
    const all = await readTopics(kafka, [harness.topics.names.pages!]);
    const decoded = await Promise.all(all.map((m) => codec.decode(m.value)));
    return decoded.filter((e) => e.name === 'PageChanged' && e.value.job_id === job).map((e) => e.value as PageChanged);
  }

  it('a run of a schedule: page.changed exactly for the pages whose content hash differs from the previous finished run, once each, signed', async () => {
    const gina = `gina-${randomUUID()}`;
    const schedule = randomUUID();
    await subscribe(gina, '/gina', ['page.changed'], { schedule_id: schedule });
    const previous = await seedRun(schedule, gina, { status: 'finished', dispatched: 0, ended: 10, pages: { '/a': 'a1', '/b': 'b1', '/gone': 'g1' } });
    const current = await seedRun(schedule, gina, { status: 'running', dispatched: 20 });
    await harness.producer.emit('JobDispatched', { ...dispatched, job_id: current, user_id: gina, schedule_id: schedule }, { topic: harness.topics.names.jobs! });
    const changedId = await fetched(current, '/a', 'a2');
    await fetched(current, '/b', 'b1');
    await fetched(current, '/new', 'n1');
    await fetched(current, '/bare', null);

    await waitFor(() => receiver.unique('/gina').length >= 1, { message: 'the page.changed delivery' });
    await new Promise((r) => setTimeout(r, 2_000));
    const got = receiver.all.filter((r) => r.path === '/gina');
    expect(got).toHaveLength(1);
    const [d] = got;
    expect(d!.validSignature).toBe(true);
    expect(d!.body).toMatchObject({
      type: 'page.changed',
      job_id: current,
      data: { url: `${SITE}/a`, fetch_id: fetchId(current, `${SITE}/a`), schedule_id: schedule, content_hash: 'a2', previous_job_id: previous, previous_fetch_id: fetchId(previous, `${SITE}/a`), previous_content_hash: 'a1' },
    });
    const events = await pageChangedEvents(current);
    expect(events.map((e) => [e.url, e.causation_id])).toEqual([[`${SITE}/a`, changedId]]);
    expect(d!.idempotencyKey).toBe(events[0]!.event_id);
  });

  it('waits (retry tiers) while the previous run\'s pages are not all in the read model, then decides', async () => {
    const hal = `hal-${randomUUID()}`;
    const schedule = randomUUID();
    await subscribe(hal, '/hal', ['page.changed']);
    // The previous run saw two URLs; one page row is not projected yet.
    const previous = await seedRun(schedule, hal, { status: 'finished', dispatched: 0, ended: 10, pages: { '/a': 'a1' }, urlsSeen: 2 });
    const current = await seedRun(schedule, hal, { status: 'running', dispatched: 20 });
    await harness.producer.emit('JobDispatched', { ...dispatched, job_id: current, user_id: hal, schedule_id: schedule }, { topic: harness.topics.names.jobs! });
    const retriedBefore = harness.service.consumer.stats().retried;
    await fetched(current, '/a', 'a2');
    await waitFor(() => harness.service.consumer.stats().retried > retriedBefore, { message: 'the undecidable page sent to a retry tier' });
    expect(receiver.unique('/hal')).toHaveLength(0);
    await seedPage(previous, '/late', 'l1', 5);
    await waitFor(() => receiver.unique('/hal').length === 1, { timeoutMs: 30_000, message: 'page.changed once the previous run settled' });
    expect(receiver.unique('/hal')[0]!.body.data).toMatchObject({ url: `${SITE}/a`, previous_content_hash: 'a1', content_hash: 'a2' });
    expect(await pageChangedEvents(current)).toHaveLength(1);
  });
});
