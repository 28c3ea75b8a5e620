import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { endpoints } from '@trawl/streams';
import { testLogger } from '@trawl/streams/testing';
import { decoded, syntheticJob } from '@trawl/streams/testing';
import { ClickHouse, ident } from '@trawl/clickhouse';
import { ClickHouseUnavailableError } from '../src/errors.ts';
import { applySchema } from '../src/schema/analytics-schema.ts';
import { UserMemory } from '../src/model/tsv-batch.ts';
import type { PositionedEvent } from '../src/model/fact-rows.ts';
import { EventIdMemory } from '../src/projector/event-id-memory.ts';
import { DEDUPE_WINDOW } from '../src/model/event-identity.ts';
import { ShadowWriter } from '../src/replay/shadow-writer.ts';
import { analyticsChecksum } from '../src/queries/consistency.ts';

/**
 * Real ClickHouse; the given inserts (by call number) store all their rows, or only the first half,
 * and then report a lost connection, as a timeout after or during the write would.
 */
class FailingInserts extends ClickHouse {
  failures = 0;
  private calls = 0;
  constructor(url: string, database: string, private readonly failing: Set<number>, private readonly landed: 'all' | 'half') {
    super({ url, database });
  }
  override async insertTsv(table: string, columns: readonly string[], body: string): Promise<void> {
    if (!this.failing.has(++this.calls)) return super.insertTsv(table, columns, body);
    const lines = body.split('\n').filter((l) => l !== '');
    const stored = this.landed === 'all' ? lines : lines.slice(0, Math.ceil(lines.length / 2));
    await super.insertTsv(table, columns, stored.map((l) => `${l}\n`).join(''));
    this.failures++;
    throw new ClickHouseUnavailableError(`connection lost after ${this.landed === 'all' ? 'the insert' : 'half the insert'} (injected)`);
  }
}

/** Three jobs' events with log positions (one partition per topic). */
function positioned(jobs: number, seed: number): PositionedEvent[] {
  const next = new Map<string, bigint>();
  const out: PositionedEvent[] = [];
  for (let j = 0; j < jobs; j++) {
    for (const e of syntheticJob(j, { jobs: 0, pagesPerJob: 30, seed, runId: 'shadow-writer' })) {
      const d = decoded(e);
      const topic = e.name.startsWith('Page') ? 'pages' : e.name === 'ItemExtracted' ? 'items' : 'jobs';
      const offset = next.get(topic) ?? 0n;
      next.set(topic, offset + 1n);
      out.push({ topic, partition: 0, offset, name: d.name, value: d.value });
    }
  }
  return out;
}

describe('ShadowWriter against a real ClickHouse', () => {
  const url = endpoints().clickhouseUrl;
  const databases: ClickHouse[] = [];
  const database = async (client?: (name: string) => ClickHouse): Promise<ClickHouse> => {
    const name = `trawl_test_sw_${randomBytes(4).toString('hex')}`;
    const ch = client ? client(name) : new ClickHouse({ url, database: name });
    await ch.exec(`CREATE DATABASE ${ident(name)}`, { database: null });
    await applySchema(ch);
    databases.push(ch);
    return ch;
  };
  const write = async (ch: ClickHouse, events: PositionedEvent[], chunk: number, eventsPerInsert: number) => {
    const writer = new ShadowWriter({ shadow: ch, users: new UserMemory(), eventIds: { job_events: new EventIdMemory(DEDUPE_WINDOW), page_fetches: new EventIdMemory(DEDUPE_WINDOW), items: new EventIdMemory(DEDUPE_WINDOW) }, logger: testLogger('shadow-writer'), eventsPerInsert });
    for (let i = 0; i < events.length; i += chunk) await writer.add(events.slice(i, i + chunk));
    return writer.flush();
  };

  let events: PositionedEvent[];
  let reference: Awaited<ReturnType<typeof analyticsChecksum>>;
  beforeAll(async () => {
    events = positioned(3, 7);
    const ch = await database();
    await write(ch, events, events.length, events.length);
    reference = await analyticsChecksum(ch);
  });

  afterAll(async () => {
    for (const ch of databases) {
      await ch.exec(`DROP DATABASE IF EXISTS ${ident(ch.database)}`, { database: null }).catch(() => undefined);
      await ch.close();
    }
  });

  it('writes the same facts and rollups in small chunks and many inserts as in one', async () => {
    const ch = await database();
    const stats = await write(ch, events, 7, 50);
    expect(stats.duplicates).toBe(0);
    expect(await analyticsChecksum(ch)).toEqual(reference);
  });

  it('leaves out a page event written again at a new position, in a later chunk or the same one', async () => {
    const pages = events.filter((e) => e.name === 'PageFetched' || e.name === 'PageFailed');
    const last = events.reduce((m, e) => (e.topic === 'pages' && e.offset > m ? e.offset : m), 0n);
    const again = pages.slice(0, 5).map((e, i) => ({ ...e, offset: last + 1n + BigInt(i) }));
    const ch = await database();
    const stats = await write(ch, [...events, ...again, ...again.map((e) => ({ ...e, offset: e.offset + 100n }))], 13, 40);
    expect(stats.duplicates).toBe(10);
    expect(await analyticsChecksum(ch)).toEqual(reference);
  });

  it('retries an insert that landed but reported a failure without storing any row twice', async () => {
    let client: FailingInserts | undefined;
    const ch = await database((name) => (client = new FailingInserts(url, name, new Set([2, 5]), 'all')));
    await write(ch, events, 11, 60);
    expect(client!.failures).toBe(2);
    expect(await analyticsChecksum(ch)).toEqual(reference);
  });

  it('retries an insert of which only some rows landed by inserting exactly the others', async () => {
    let client: FailingInserts | undefined;
    const ch = await database((name) => (client = new FailingInserts(url, name, new Set([2, 4, 7]), 'half')));
    await write(ch, events, 11, 60);
    expect(client!.failures).toBe(3);
    expect(await analyticsChecksum(ch)).toEqual(reference);
  });
});
