/**
 * The frontier as it runs in production — its own main.ts in a child process, on topics of its own
 * (TRAWL_TOPIC_PREFIX) and a throw-away database — fed garbage on the two topics it consumes,
 * trawl.jobs and trawl.pages: a bad magic byte, a truncated body and 900 KB
 * of random bytes, each batch followed by a valid event of a job on the same partition. The
 * garbage must land in trawl.events.dlq, byte for byte, with its origin headers; the valid event
 * after it must be decided (a FetchRequested on trawl.fetch), so the projection kept going. (The
 * garbage and the checks: streams' testing poison-messages.ts.)
 */
import { randomUUID } from 'node:crypto';
import { samples, type FetchRequested } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { poisonWorld, waitFor, type AppProcess } from '@trawl/streams/testing';
import { crawlSpec } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const world = poisonWorld('poison-frontier', { database: () => createTestDatabase('trawl_test_poison_frontier') });
const { codec } = world;
const topics = { jobs: world.topic('trawl.jobs'), pages: world.topic('trawl.pages'), fetch: world.topic('trawl.fetch'), dlq: world.topic('trawl.events.dlq') };
let frontier: AppProcess;

beforeAll(async () => {
  frontier = await world.startApp('frontier', { readyWhen: '"partitions assigned"' });
}, 120_000);
afterAll(() => world.close());

const dispatched = (jobId: string, seed: string) => ({ ...samples.JobDispatched, event_id: randomUUID(), job_id: jobId, start_urls: [seed], spec: crawlSpec(null, { depth: 2, max_pages: 100 }) });

/** The frontier's FetchRequested for `url` of the job, if it made one. */
async function fetchRequested(jobId: string, url: string): Promise<FetchRequested | undefined> {
  const requested = (await readEvents(world.kafka, codec, [topics.fetch])).map(({ event }) => event).filter((e) => e.name === 'FetchRequested');
  return requested.map((e) => e.value as FetchRequested).find((f) => f.job_id === jobId && f.url === url);
}

describe('the frontier on garbage', () => {
  it('dead-letters every undecodable message on trawl.jobs and requests the seed of the JobDispatched after it', async () => {
    const jobId = randomUUID();
    const seed = 'http://poison.test/jobs/seed';
    const outcome = await world.feed({
      app: frontier, topic: topics.jobs, key: jobId, deadLetterTopic: topics.dlq,
      valid: await codec.encode(topics.jobs, 'JobDispatched', dispatched(jobId, seed)),
      effect: "the JobDispatched's seed requested (a FetchRequested)",
      handled: async () => (await fetchRequested(jobId, seed)) !== undefined,
    });
    expect(outcome.problems).toEqual([]);
    console.info(outcome.summary);
  }, 150_000);

  it('dead-letters every undecodable message on trawl.pages and requests the link of the PageFetched after it', async () => {
    const jobId = randomUUID();
    const seed = 'http://poison.test/pages/seed';
    const link = 'http://poison.test/pages/link';
    // A job whose seed is being fetched: its PageFetched is what follows the garbage.
    await world.producer.emit('JobDispatched', dispatched(jobId, seed), { topic: topics.jobs });
    const fetch = await waitFor(() => fetchRequested(jobId, seed), { timeoutMs: 60_000, intervalMs: 500, message: () => `the seed's FetchRequested; log:\n${frontier.tail()}` });
    const page = { ...samples.PageFetched, event_id: randomUUID(), job_id: jobId, fetch_id: fetch.fetch_id, url: seed, final_url: seed, depth: fetch.depth, links: [link], next_page: null, item_count: 0 };
    const outcome = await world.feed({
      app: frontier, topic: topics.pages, key: jobId, deadLetterTopic: topics.dlq,
      valid: await codec.encode(topics.pages, 'PageFetched', page),
      effect: "the PageFetched's link requested (a FetchRequested)",
      handled: async () => (await fetchRequested(jobId, link)) !== undefined,
    });
    expect(outcome.problems).toEqual([]);
    console.info(outcome.summary);
  }, 150_000);
});
