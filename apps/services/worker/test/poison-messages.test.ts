/**
 * The worker as it runs in production — its own main.ts in a child process, on topics of its own
 * (TRAWL_TOPIC_PREFIX) on the real Kafka and registry — fed garbage on trawl.fetch and on a retry
 * tier: a bad magic byte, a truncated body and 900 KB of random bytes, each
 * followed by a valid FetchRequested on the same partition. Each piece of garbage must land in
 * trawl.fetch.dlq, byte for byte, with its origin headers; the valid fetch after it must be done
 * (a PageFetched), so the consumer kept going. (The garbage and the checks: streams' testing
 * poison-messages.ts.)
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { samples, type PageFetched } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { poisonWorld, type AppProcess } from '@trawl/streams/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const world = poisonWorld('poison-messages');
const { kafka, codec } = world;
const topics = { fetch: world.topic('trawl.fetch'), retry1: world.topic('trawl.fetch.retry.1'), dlq: world.topic('trawl.fetch.dlq'), pages: world.topic('trawl.pages') };
let worker: AppProcess;
let site: Server;
let origin: string;

beforeAll(async () => {
  site = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>${req.url}</p></body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  await world.open();
  // The worker consumes once its group has joined.
  worker = await world.startApp('worker', {
    env: { TRAWL_FETCH_ALLOW: new URL(origin).host, TRAWL_FETCH_RETRY_DELAYS_MS: '200,200,200' },
    readyWhen: '"consumer started"',
  });
}, 120_000);

afterAll(async () => {
  await world.close();
  await new Promise((resolve) => site?.close(resolve));
});

describe('the worker on garbage', () => {
  it.each([
    ['trawl.fetch', 'fetch'],
    ['trawl.fetch.retry.1', 'retry1'],
  ] as const)('dead-letters every undecodable message on %s and goes on with the next one', async (_name, which) => {
    const topic = topics[which];
    const fetchId = `after-poison-${which}`;
    const outcome = await world.feed({
      app: worker, topic, key: `${which}.poison.test`, deadLetterTopic: topics.dlq,
      valid: await codec.encode(topic, 'FetchRequested', { ...samples.FetchRequested, fetch_id: fetchId, url: `${origin}/${which}` }),
      effect: 'the valid fetch done (a PageFetched)',
      handled: async () => (await readEvents(kafka, codec, [topics.pages])).some(({ event }) => event.name === 'PageFetched' && (event.value as PageFetched).fetch_id === fetchId),
    });
    expect(outcome.problems).toEqual([]);
    console.info(outcome.summary);
  }, 150_000);
});
