import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@trawl/streams';
import { startTcpProxy } from '@trawl/streams/testing';
import { splitStatements } from '../src/schema/analytics-schema.ts';
import { startChProjector, type ChProjector } from '../src/projector/live-projector.ts';
import { writeFacts } from '../src/projector/write-facts.ts';
import { DEDUPE_WINDOW } from '../src/model/event-identity.ts';
import { storedCopies } from '../src/projector/positions.ts';
import { UserMemory } from '../src/model/tsv-batch.ts';
import { analyticsChecksum } from '../src/queries/consistency.ts';
import { errorKinds, itemsPerMinute, jobTotals, jobTotalsFromFacts, pagesPerMinute, retriesAndDeadLetters, statusMix } from '../src/queries/analytics.ts';
import { createHarness, type Harness } from './support/harness.ts';
import { expectedTotals } from './support/oracle.ts';
import { syntheticCrawl } from '@trawl/streams/testing';

async function compareWithEvents(h: Harness): Promise<void> {
  const expected = expectedTotals(await h.events());
  expect(await jobTotalsFromFacts(h.ch)).toEqual(expected);
  expect(await jobTotals(h.ch)).toEqual(expected);
  const sum = (k: 'pages_fetched' | 'pages_failed' | 'bytes' | 'items' | 'retries') => expected.reduce((s, t) => s + t[k], 0);
  const minutes = await pagesPerMinute(h.ch);
  expect(minutes.reduce((s, m) => s + m.pages, 0)).toBe(sum('pages_fetched') + sum('pages_failed'));
  expect(minutes.reduce((s, m) => s + m.bytes, 0)).toBe(sum('bytes'));
  expect(minutes.every((m) => m.p50 <= m.p95 && m.p95 <= m.p99)).toBe(true);
  expect((await statusMix(h.ch)).reduce((s, r) => s + r.pages, 0)).toBe(sum('pages_fetched') + sum('pages_failed'));
  expect((await errorKinds(h.ch)).reduce((s, r) => s + r.pages, 0)).toBe(sum('pages_failed'));
  expect((await itemsPerMinute(h.ch)).reduce((s, r) => s + r.items, 0)).toBe(sum('items'));
  expect(await retriesAndDeadLetters(h.ch)).toEqual({ retries: sum('retries'), deadLettered: sum('pages_failed') });
}

describe('projector-ch against the real stack', () => {
  let h: Harness;
  let projector: ChProjector | undefined;
  const start = (clickhouseUrl = h.clickhouseUrl) =>
    startChProjector({
      clickhouseUrl, database: h.ch.database, databaseUrl: h.pg.url, kafka: h.kafka, logger: h.logger,
      topics: h.topics, groupId: `projector-ch-${h.id}`, maxRows: 2000, maxDelayMs: 200, statsLogIntervalMs: 0,
    });

  beforeAll(async () => {
    h = await createHarness('projch');
    await h.produce(syntheticCrawl({ jobs: 12, pagesPerJob: 30, seed: 21, runId: h.id }));
  });

  afterAll(async () => {
    await projector?.stop();
    await h?.close();
  });

  it('projects a crawl into facts and rollups that agree with the events', async () => {
    projector = await start();
    await h.waitForCatchUp();
    await compareWithEvents(h);
    expect(projector.stats()).toMatchObject({ failures: 0 });
    // The dashboard queries shipped in infra/clickhouse/dashboards run on this server as they are.
    for (const sql of splitStatements(readFileSync(join(repoRoot, 'infra/clickhouse/dashboards/analytics.sql'), 'utf8'))) {
      expect(Array.isArray(await h.ch.rows(sql))).toBe(true);
    }
  });

  it('checks a batch of 30,000 events for stored copies in one read (the ids as external data)', async () => {
    // As an IN list, 30,000 ids would outgrow ClickHouse's default max_query_size and max_ast_elements.
    const events = Array.from({ length: 30_000 }, (_, i) => ({ partition: 0, offset: BigInt(1_000_000 + i), value: { event_id: `absent-${h.id}-${i}` } }));
    const stored = await storedCopies(h.ch, 'items', events as never, DEDUPE_WINDOW);
    expect({ positions: stored.positions.size, kept: events.filter((e) => stored.keptAt(0, e.value.event_id) !== undefined).length }).toEqual({ positions: 0, kept: 0 });
  });

  it('changes nothing when every event is delivered again', async () => {
    await projector!.stop();
    projector = undefined;
    const before = await analyticsChecksum(h.ch);
    // The consumer group goes back to the start: every message is delivered again.
    const admin = h.kafka.admin();
    await admin.connect();
    for (const topic of Object.values(h.topics)) await admin.resetOffsets({ groupId: `projector-ch-${h.id}`, topic, earliest: true });
    await admin.disconnect();
    const events = await h.events();
    projector = await start();
    await expect.poll(() => projector!.stats().skipped, { timeout: 60_000, interval: 250 }).toBe(events.length);
    expect(projector.stats().inserted).toBe(0);
    expect(await analyticsChecksum(h.ch)).toEqual(before);

    // A batch written twice through the position check (a retry whose first try landed) adds nothing either.
    const positioned = events.map((e) => ({ topic: e.topic, partition: e.partition, offset: BigInt(e.offset), name: e.event.name, value: e.event.value }));
    expect(await writeFacts(h.ch, positioned, new UserMemory(), { skipStored: true })).toEqual({ inserted: 0, skipped: events.length, duplicates: 0 });
    expect(await analyticsChecksum(h.ch)).toEqual(before);
  });

  it('absorbs events written again at new positions, later (a worker that fetched a page again after a crash)', async () => {
    projector ??= await start();
    const before = await analyticsChecksum(h.ch);
    // The same crawl again (same seed: the same event ids and bodies) twice over, a minute later:
    // copies at new positions and in other minutes, some in the same flush as each other.
    const again = syntheticCrawl({ jobs: 12, pagesPerJob: 30, seed: 21, runId: h.id }).map((e) => ({ ...e, occurredAt: new Date(e.occurredAt.getTime() + 61_000) }));
    const { duplicates } = projector.stats();
    await h.produce(again);
    await h.produce(again);
    await h.waitForCatchUp();
    // Facts, rollups per job and per minute (bytes, fetch time, retries, counts): as before, and as the events say.
    await compareWithEvents(h);
    expect(await analyticsChecksum(h.ch)).toEqual(before);
    expect(projector.stats().duplicates - duplicates).toBe(2 * again.length);
  });

  it('waits for ClickHouse, pauses while it is away and catches up without loss or double counting', async () => {
    await projector!.stop();
    projector = undefined;
    const target = new URL(h.clickhouseUrl);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 8123) });
    const viaProxy = new URL(h.clickhouseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    try {
      // Started while ClickHouse cannot be reached: it waits instead of failing.
      await proxy.cut();
      const starting = start(viaProxy.toString());
      await new Promise((r) => setTimeout(r, 1500));
      await proxy.restore();
      projector = await starting;

      // Cut again with events in flight: flushes fail and are retried with backoff.
      await proxy.cut();
      await h.produce(syntheticCrawl({ jobs: 4, pagesPerJob: 20, seed: 22, runId: `${h.id}-b` }));
      await expect.poll(() => projector!.stats().failures, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
      await proxy.restore();
      await h.waitForCatchUp();
      await compareWithEvents(h);
    } finally {
      await projector?.stop();
      projector = undefined;
      await proxy.close();
    }
  });
});
