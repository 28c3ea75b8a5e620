/**
 * A receiver down for a whole minute, with the retry tiers a deployment gets by default
 * (TRAWL_WEBHOOK_RETRY_DELAYS_MS: 5 s, 30 s, 2 min, …): every delivery arrives once it is back,
 * each job's events in log order, nothing dead-lettered. The minute outage ends between the second
 * retry (35 s after the event) and the third (155 s), so the test takes about three minutes. A
 * job's `job.completed`, which waits behind its `job.started`, follows it within seconds instead
 * of a tier later (the fourth tier is 10 minutes).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { catalogueOptions } from '@trawl/streams';
import { waitFor } from '@trawl/streams/testing';
import { WebhookHarness } from './support/webhook-harness.ts';

const OUTAGE_MS = 60_000;
const DELAYS = catalogueOptions({}).webhookRetryDelaysMs;
const harness = new WebhookHarness('webhooks-outage', DELAYS, { timeoutMs: 2_000, itemsWindowMs: 300, itemsMax: 500, itemsMaxBytes: 1_000_000, pollMs: 200 });
const { receiver } = harness;

beforeAll(() => harness.start(), 90_000);
afterAll(() => harness.stop());

it('a receiver down for a minute gets every delivery once it is back, each job\'s events in log order', async () => {
  const user = `olga-${randomUUID()}`;
  const hook = await harness.subscribe(user, '/olga', ['job.started', 'job.completed']);
  const jobs = [randomUUID(), randomUUID(), randomUUID()];
  const port = receiver.port;
  await receiver.stop();
  const downAt = Date.now();
  const ids = new Map<string, string[]>();
  for (const j of jobs) ids.set(j, [await harness.started(j, user)]);
  for (const j of jobs) ids.get(j)!.push(await harness.ended(j));
  await waitFor(async () => (await harness.rows(hook)).filter((r) => r.status === 'retrying').length === 6, { message: 'six deliveries retrying' });

  await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - downAt))));
  const failedWhileDown = (await harness.rows(hook)).filter((r) => r.type === 'job.started').map((r) => r.attempts);
  expect(failedWhileDown.every((n) => n >= 2), `attempts while down: ${failedWhileDown.join(', ')}`).toBe(true);
  await receiver.start(port);
  const backAt = Date.now();

  await waitFor(() => receiver.unique('/olga').length === 6, {
    timeoutMs: 200_000, intervalMs: 1_000, message: () => `all six after the outage (got: ${receiver.unique('/olga').map((r) => r.body.type).join(', ')})`,
  });
  const got = receiver.unique('/olga');
  expect(got.every((r) => r.validSignature && r.at >= backAt)).toBe(true);
  for (const j of jobs) {
    const ofJob = got.filter((r) => r.body.job_id === j);
    expect(ofJob.map((r) => r.body.id)).toEqual(ids.get(j));
    expect(ofJob[1]!.at - ofJob[0]!.at, 'job.completed right behind job.started').toBeLessThan(10_000);
  }
  await waitFor(async () => (await harness.rows(hook)).every((r) => r.status === 'delivered'), { message: 'rows delivered' });
  expect(receiver.all.filter((r) => r.path === '/olga')).toHaveLength(6);
}, 330_000);
