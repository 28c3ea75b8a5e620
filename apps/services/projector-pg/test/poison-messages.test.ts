/**
 * projector-pg as it runs in production — its own main.ts in a child process, on topics of its own
 * (TRAWL_TOPIC_PREFIX) and a throw-away database — fed garbage on trawl.jobs, trawl.pages and
 * trawl.items: a bad magic byte, a truncated body and 900 KB of random bytes,
 * each batch followed by a valid event on the same partition. The garbage must land in
 * trawl.events.dlq, byte for byte, with its origin headers; the valid events after it must be
 * projected (offsets stored past them), so the projection kept going. (The garbage and the
 * checks: streams' testing poison-messages.ts.)
 */
import { samples, type EventName } from '@trawl/schemas';
import { poisonWorld, type AppProcess } from '@trawl/streams/testing';
import { createTestDatabase } from '@trawl/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const world = poisonWorld('poison-pg', { database: () => createTestDatabase('trawl_test_poison_pg') });
let projector: AppProcess;

beforeAll(async () => {
  projector = await world.startApp('projector-pg', { readyWhen: '"partitions assigned"' });
}, 120_000);
afterAll(() => world.close());

describe('projector-pg on garbage', () => {
  it.each([
    ['trawl.jobs', 'CrawlRequested'],
    ['trawl.pages', 'PageFetched'],
    ['trawl.items', 'ItemExtracted'],
  ] as const)('dead-letters every undecodable message on %s and projects the %s after it', async (name, valid: EventName) => {
    const topic = world.topic(name);
    const outcome = await world.feed({
      app: projector, topic, key: samples.CrawlRequested.job_id, deadLetterTopic: world.topic('trawl.events.dlq'),
      valid: await world.codec.encode(topic, valid, samples[valid]),
      effect: `the ${valid} projected (offset stored past it)`,
      // Projected once the stored offset of its partition passes it.
      handled: async ({ partition, offset }) => {
        const { rows } = await world.db.pool.query<{ next_offset: string }>('SELECT next_offset FROM stream_offsets WHERE topic = $1 AND partition = $2', [topic, partition]);
        return rows.some((r) => BigInt(r.next_offset) > BigInt(offset));
      },
    });
    expect(outcome.problems).toEqual([]);
    console.info(outcome.summary);
  }, 150_000);
});
