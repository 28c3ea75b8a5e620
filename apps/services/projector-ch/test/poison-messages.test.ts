/**
 * projector-ch as it runs in production — its own main.ts in a child process, on topics of its own
 * (TRAWL_TOPIC_PREFIX), a throw-away ClickHouse database and a throw-away Postgres database for the
 * swap lock — fed garbage on trawl.jobs, trawl.pages and trawl.items: a bad magic byte, a
 * truncated body and 900 KB of random bytes, each batch followed by a valid event on
 * the same partition. The garbage must land in trawl.events.dlq, byte for byte, with its origin
 * headers; the valid event after it must be projected (its fact row stored at its position), so the
 * projection kept going. (The garbage and the checks: streams' testing poison-messages.ts.)
 */
import { randomBytes } from 'node:crypto';
import { samples, type EventName } from '@trawl/schemas';
import { endpoints } from '@trawl/streams';
import { poisonWorld, type AppProcess } from '@trawl/streams/testing';
import { createTestDatabase } from '@trawl/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouse, ident } from '@trawl/clickhouse';
import type { FactTable } from '../src/model/fact-rows.ts';
import { storedPositions } from '../src/projector/positions.ts';

// Its Postgres database is for the swap lock only (advisory locks are per database).
const world = poisonWorld('poison-ch', { database: () => createTestDatabase('trawl_test_poison_ch') });
const ch = new ClickHouse({ url: endpoints().clickhouseUrl, database: `trawl_test_poison_${randomBytes(4).toString('hex')}` });
let projector: AppProcess;

beforeAll(async () => {
  if (!(await ch.ping())) throw new Error(`ClickHouse at ${endpoints().clickhouseUrl} does not answer: start the local stack with \`npm run stack -- up\``);
  projector = await world.startApp('projector-ch', { env: { CLICKHOUSE_DATABASE: ch.database }, readyWhen: '"consumer started"' });
}, 120_000);

afterAll(async () => {
  await world.close();
  await ch.exec(`DROP DATABASE IF EXISTS ${ident(ch.database)}`, { database: null }).catch(() => undefined);
  await ch.close();
});

describe('projector-ch on garbage', () => {
  it.each([
    ['trawl.jobs', 'CrawlRequested', 'job_events'],
    ['trawl.pages', 'PageFetched', 'page_fetches'],
    ['trawl.items', 'ItemExtracted', 'items'],
  ] as const)('dead-letters every undecodable message on %s and projects the %s after it', async (name, valid: EventName, table: FactTable) => {
    const topic = world.topic(name);
    const outcome = await world.feed({
      app: projector, topic, key: samples.CrawlRequested.job_id, deadLetterTopic: world.topic('trawl.events.dlq'),
      valid: await world.codec.encode(topic, valid, samples[valid]),
      effect: `the ${valid} projected (its row in ${table})`,
      // A fact row carries its (partition, offset): the valid event is projected once its row is there.
      handled: async ({ partition, offset }) => (await storedPositions(ch, table, [{ partition, offset: BigInt(offset) }]).catch(() => new Set())).size === 1,
    });
    expect(outcome.problems).toEqual([]);
    console.info(outcome.summary);
  }, 150_000);
});
