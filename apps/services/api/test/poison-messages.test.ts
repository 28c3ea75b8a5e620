/**
 * The API's live feed as it runs in production — the API's own main.ts in a child process, on
 * topics of its own (TRAWL_TOPIC_PREFIX) and a throw-away database — with garbage on the topics it
 * follows, trawl.jobs and trawl.pages: a bad magic byte, a truncated body and
 * 900 KB of random bytes, each batch followed by a valid event of the caller's job on the same
 * partition. The feed is a view, not work (streams' subscribeLive): it skips what it cannot decode,
 * with a warning, and dead-letters nothing (projector-pg and projector-ch do that). So the caller's
 * WebSocket must get the valid event and nothing for the garbage, each piece of garbage must be
 * logged as skipped, nothing may reach trawl.events.dlq, and the server must still answer.
 */
import { randomUUID } from 'node:crypto';
import { samples, type EventName } from '@trawl/schemas';
import { deadLettersFrom, poisonWorld, sendPoison, waitFor, type AppProcess } from '@trawl/streams/testing';
import { createTestDatabase } from '@trawl/store/testing';
import { setupReadModels } from '@trawl/projector-pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createApiKey } from '../src/data/api-keys.ts';
import { connectFeed, keyAccepted, type FeedMessage } from './support.ts';

const world = poisonWorld('poison-api', { database: () => createTestDatabase('trawl_test_poison_api') });
const { kafka, codec, producer } = world;
const sockets: WebSocket[] = [];
let api: AppProcess;
let base: string;

beforeAll(async () => {
  await world.open();
  // The read models projector-pg keeps in production: the feed looks a job's owner up there.
  await setupReadModels(world.db.pool);
  api = await world.startApp('api', { env: { TRAWL_API_PORT: '0' }, readyWhen: '"live feed connected"' });
  base = await waitFor(() => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(api.log())?.[1], { timeoutMs: 30_000, intervalMs: 100, message: () => `the API's address; log:\n${api.tail()}` });
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.terminate();
  await world.close();
});

const events = (messages: readonly FeedMessage[], jobId: string) => messages.filter((m) => m.type === 'event' && m.job_id === jobId);

/** The API's warnings that the feed skipped a message of `topic`. */
function skipped(topic: string): number {
  return api.log().split('\n').filter((line) => line.includes('"live feed skips an undecodable message"') && line.includes(`"topic":"${topic}"`)).length;
}

describe('the live feed on garbage', () => {
  it.each([
    ['trawl.jobs', 'JobCompleted'],
    ['trawl.pages', 'PageFetched'],
  ] as const)("skips every undecodable message on %s and delivers the caller's %s after it", async (name, valid: EventName) => {
    const topic = world.topic(name);
    const user = `poison-${randomUUID().slice(0, 8)}`;
    const { key } = await createApiKey(world.db.pool, user);
    await keyAccepted(base, key);
    const auth = { authorization: `Bearer ${key}` };
    const feed = await connectFeed(`${base.replace('http', 'ws')}/events`, auth);
    sockets.push(feed.ws);
    const res = await fetch(`${base}/crawl`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ start_urls: ['http://poison.test/feed'], depth: 0 }) });
    expect(res.status).toBe(200);
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    // The feed is live for this job (and knows its owner): the caller sees its first two events.
    await waitFor(() => events(feed.messages, jobId).length >= 2, { timeoutMs: 30_000, intervalMs: 100, message: () => `the job's first events on the feed; log:\n${api.tail()}` });

    const started = performance.now();
    const sent = await sendPoison(kafka, producer, { topic, key: jobId, valid: await codec.encode(topic, valid, { ...samples[valid], event_id: randomUUID(), job_id: jobId }) });
    const delivered = await waitFor(
      () => events(feed.messages, jobId).find((m) => m.event === valid && m.partition === sent.valid.partition && m.offset === sent.valid.offset),
      { timeoutMs: 60_000, intervalMs: 100, message: () => `the ${valid} after the garbage on the feed; log:\n${api.tail()}` },
    );
    const ms = Math.round(performance.now() - started);
    expect(delivered.data).toMatchObject({ job_id: jobId });
    // Skipped, one warning each, and nothing else delivered for them.
    await waitFor(() => skipped(topic) >= sent.poison.length, { timeoutMs: 10_000, intervalMs: 100, message: () => `${sent.poison.length} warnings of skipped messages on ${topic}; log:\n${api.tail()}` });
    expect(skipped(topic)).toBe(sent.poison.length);
    expect(events(feed.messages, jobId).map((m) => m.event)).toEqual(['CrawlRequested', 'JobDispatched', valid]);
    // Not dead-lettered: the live feed is no consumer of record.
    expect(await deadLettersFrom(kafka, world.topic('trawl.events.dlq'), topic)).toEqual([]);
    // The server is still up: the process runs, the socket is open, and it answers.
    expect(api.running()).toBe(true);
    expect(feed.ws.readyState).toBe(WebSocket.OPEN);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    console.info(`${topic}: ${skipped(topic)} skipped (0 dead letters), then the ${valid} delivered on the socket, in ${ms} ms`);
  }, 150_000);
});
