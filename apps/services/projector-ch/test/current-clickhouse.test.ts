/**
 * The project's ClickHouse SQL on a current engine as well as on the stack's: the same statements,
 * through the same code, with the same rows, on the local stack's ClickHouse (Debian's 18.16) and
 * on chdb (the current engine in-process, test/support/chdb-clickhouse.ts), and the same answers
 * from both. Covered: the schema (infra/clickhouse/sql) and the projection version; the live write
 * path with its position and event-id checks (external data); the analytics queries; the
 * consistency query; the dashboard SQL (infra/clickhouse/dashboards, as the console and Grafana
 * run it); a replay's statements (leftovers, shadow, copy of a prefix, the id memory and users it
 * loads, next positions, the swap).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { endpoints, rangeKey, repoRoot } from '@trawl/streams';
import { atLeastOnceLog, decoded, placeInPartitions, testLogger, type PlacedRecord } from '@trawl/streams/testing';
import { ClickHouse, ident, quote, uint } from '@trawl/clickhouse';
import { createDatabase, databaseExists, recordVersion, setupAnalytics, splitStatements, storedVersion, tableNames, applySchema } from '../src/schema/analytics-schema.ts';
import { FACT_TABLES, type FactTable, type PositionedEvent } from '../src/model/fact-rows.ts';
import { UserMemory } from '../src/model/tsv-batch.ts';
import { DEDUPE_WINDOW } from '../src/model/event-identity.ts';
import { writeFacts, type WriteResult } from '../src/projector/write-facts.ts';
import { nextPositions } from '../src/projector/positions.ts';
import { EventIdMemory } from '../src/projector/event-id-memory.ts';
import { ShadowWriter } from '../src/replay/shadow-writer.ts';
import { copyPrefix, dropLeftovers, learnCopiedUsers, swapDatabases } from '../src/replay/replay-ch.ts';
import { analyticsChecksum, checksumDifferences, type AnalyticsChecksum } from '../src/queries/consistency.ts';
import { errorKinds, itemsPerMinute, jobTotals, jobTotalsFromFacts, pagesPerMinute, retriesAndDeadLetters, statusMix } from '../src/queries/analytics.ts';
import { jobRunTimes } from '../src/queries/job-run-times.ts';
import { ChdbClickHouse } from './support/chdb-clickhouse.ts';

const DASHBOARDS = join(repoRoot, 'infra', 'clickhouse', 'dashboards');
const TOPIC_OF_TABLE: Readonly<Record<FactTable, 'jobs' | 'pages' | 'items'>> = { job_events: 'jobs', page_fetches: 'pages', items: 'items' };
const TOPIC_TABLES: [FactTable, string][] = FACT_TABLES.map((t) => [t, TOPIC_OF_TABLE[t]]);
const positioned = (r: PlacedRecord): PositionedEvent => ({ ...decoded(r.event), topic: r.topic, partition: r.partition, offset: r.offset });

/** A dashboard file's statement with its placeholders filled as the console fills them (literals only). */
function renderPanel(text: string, v: { from: number; to: number; step: number; user: string; limit: number }): string {
  const sql = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .trim()
    .replace(/;\s*$/, '');
  const literals: Record<string, string> = { from: uint(v.from), to: uint(v.to), step: uint(v.step), limit: uint(v.limit), user: quote(v.user), host: quote(''), job_id: quote('') };
  return sql.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
    if (!(name in literals)) throw new Error(`unknown placeholder {${name}}`);
    return literals[name]!;
  });
}

describe('the SQL on a current ClickHouse (chdb) answers as on the stack’s', () => {
  const database = `trawl_test_cur_${randomBytes(4).toString('hex')}`;
  let stack: ClickHouse;
  let current: ChdbClickHouse;
  /** Runs the same thing on both engines: [stack, current]. */
  const both = async <T>(work: (ch: ClickHouse) => Promise<T>): Promise<[T, T]> => [await work(stack), await work(current)];

  const log = placeInPartitions(atLeastOnceLog({ seed: 20261125, jobs: 8, copyRate: 0.4, pauses: true }), 3);
  const events = log.map(positioned);

  beforeAll(async () => {
    stack = new ClickHouse({ url: endpoints().clickhouseUrl, database });
    if (!(await stack.ping())) throw new Error(`ClickHouse at ${endpoints().clickhouseUrl} does not answer: start the local stack with \`npm run stack -- up\``);
    current = await ChdbClickHouse.open(database);
  });
  afterAll(async () => {
    for (const ch of [stack, current]) {
      if (!ch) continue;
      const rows = await ch.rows<{ name: string }>(`SELECT name FROM system.databases WHERE startsWith(name, ${quote(database)})`, { database: null });
      for (const { name } of rows) await ch.exec(`DROP DATABASE IF EXISTS ${ident(name)}`, { database: null });
    }
    await stack?.close();
    await current?.shutdown();
  });

  it('compares an old and a current engine', async () => {
    const [old, now] = await both((ch) => ch.rows<{ v: string }>('SELECT version() AS v', { database: null }));
    const major = (v: string) => Number(v.split('.')[0]);
    expect(major(now[0]!.v)).toBeGreaterThanOrEqual(24);
    expect(major(now[0]!.v)).toBeGreaterThan(major(old[0]!.v));
    expect(await current.version()).toBe(now[0]!.v);
  });

  it('returns 64-bit integers in JSON as strings on both, as the clients promise', async () => {
    const [a, b] = await both((ch) => ch.rows('SELECT toUInt64(18446744073709551615) AS big, toInt64(-5) AS neg, [toUInt64(1)] AS arr, toUInt32(7) AS small', { database: null }));
    expect(a).toEqual([{ big: '18446744073709551615', neg: '-5', arr: ['1'], small: 7 }]);
    expect(b).toEqual(a);
  });

  it('applies infra/clickhouse/sql and records the projection version the same way', async () => {
    const [a, b] = await both(async (ch) => ({
      setup: await setupAnalytics(ch),
      again: await setupAnalytics(ch),
      version: await storedVersion(ch),
      tables: await ch.rows(`SELECT name, engine FROM system.tables WHERE database = ${quote(database)} ORDER BY name`),
      // Tables only: a view's columns are described differently (18.16 names the time zone of its DateTime).
      columns: await ch.rows(`SELECT table, name, type FROM system.columns WHERE database = ${quote(database)} AND NOT endsWith(table, '_mv') ORDER BY table, name`),
    }));
    expect(a.setup).toEqual({ created: true });
    expect(a.again).toEqual({ created: false });
    expect(a.tables.length).toBe(tableNames().length + 5); // the 5 materialised views
    expect(b).toEqual(a);
  });

  it('writes the same facts through the live path, redeliveries and re-emitted copies included (ids sent as external data)', async () => {
    const [a, b] = await both(async (ch) => {
      const users = new UserMemory();
      const results: WriteResult[] = [];
      for (let i = 0; i < events.length; i += 17) {
        const batch = events.slice(i, i + 17);
        results.push(await writeFacts(ch, batch, users, { skipStored: true }));
        results.push(await writeFacts(ch, batch, users, { skipStored: true })); // a redelivery
      }
      const facts: Record<string, unknown[]> = {};
      for (const t of FACT_TABLES) facts[t] = await ch.rows(`SELECT * FROM ${ident(t)} FINAL ORDER BY _partition, _offset`);
      return { results, facts };
    });
    const total = (r: WriteResult[]) => r.reduce((s, x) => s + x.inserted, 0);
    expect(total(a.results)).toBeGreaterThan(0);
    expect(a.results.some((r) => r.duplicates > 0)).toBe(true);
    expect(b.results).toEqual(a.results);
    expect(b.facts).toEqual(a.facts);
  });

  it('answers the analytics queries the same', async () => {
    const [a, b] = await both(async (ch) => ({
      pages: await pagesPerMinute(ch),
      status: await statusMix(ch),
      errors: await errorKinds(ch),
      items: await itemsPerMinute(ch),
      retries: await retriesAndDeadLetters(ch),
      jobs: await jobTotals(ch),
      jobsFromFacts: await jobTotalsFromFacts(ch),
      runTimes: await jobRunTimes(ch, undefined, new Date(Date.UTC(2026, 3, 1))),
    }));
    expect(a.pages.length).toBeGreaterThan(0);
    expect(a.runTimes.some((r) => r.pauses > 0 && r.paused_seconds > 0)).toBe(true);
    expect(a.jobs.length).toBeGreaterThan(0);
    expect(a.jobs).toEqual(a.jobsFromFacts);
    expect(b).toEqual(a);
  });

  let checksum: AnalyticsChecksum;
  it('answers the consistency query the same', async () => {
    const [a, b] = await both((ch) => analyticsChecksum(ch));
    expect(a.page_fetches!.rows).toBeGreaterThan(0);
    expect(checksumDifferences(a, b)).toEqual([]);
    checksum = a;
  });

  it('answers the dashboard SQL the same (the console and Grafana panels, and analytics.sql)', async () => {
    const files = readdirSync(DASHBOARDS).filter((f) => f.endsWith('.sql')).sort();
    const users = (await stack.rows<{ u: string }>(`SELECT DISTINCT user_id AS u FROM job_events WHERE user_id != '' ORDER BY u`)).map((r) => r.u);
    expect(users.length).toBeGreaterThan(0);
    let statements = 0;
    let answered = 0;
    for (const file of files) {
      const text = readFileSync(join(DASHBOARDS, file), 'utf8');
      const sqls = /^--\s*@name\s/m.test(text)
        ? users.map((user) => renderPanel(text, { from: 0, to: 2 ** 31 - 1, step: 60, user, limit: 10 }))
        : splitStatements(text);
      for (const sql of sqls) {
        const [a, b] = await both((ch) => ch.rows(sql));
        expect(b, `${file}: ${sql}`).toEqual(a);
        statements++;
        if (a.length > 0) answered++;
      }
    }
    expect(statements).toBeGreaterThan(files.length);
    expect(answered).toBeGreaterThan(0);
  });

  it("runs a replay's statements the same: leftovers dropped, a shadow filled from a copied prefix and the rest of the log, swapped in", async () => {
    // Each partition's replay starts half-way: the facts before are copied from the live tables.
    const ends = new Map<string, bigint>();
    for (const e of events) {
      const k = rangeKey(e.topic, e.partition);
      if (e.offset + 1n > (ends.get(k) ?? 0n)) ends.set(k, e.offset + 1n);
    }
    const starts = new Map([...ends].map(([k, end]) => [k, end / 2n]));
    const startsOf = (topic: string) => new Map([...starts].filter(([k]) => k.startsWith(`${topic}:`)).map(([k, o]) => [Number(k.slice(topic.length + 1)), o]));
    // Job events first, then the rest, each in log order: as the replay reads them.
    const rest = events.filter((e) => e.offset >= starts.get(rangeKey(e.topic, e.partition))!);
    const ordered = [...rest.filter((e) => e.topic === 'jobs'), ...rest.filter((e) => e.topic !== 'jobs')];

    const [a, b] = await both(async (ch) => {
      const leftover = `${database}_rleft0`;
      await createDatabase(ch, leftover);
      await dropLeftovers(ch, database, testLogger('current-clickhouse'));
      const leftoverGone = !(await databaseExists(ch, leftover));

      const shadow = ch.withDatabase(`${database}_rtest1`);
      await applySchema(shadow);
      await recordVersion(shadow, 'replay rtest1');
      const copied = await copyPrefix(ch, shadow, database, TOPIC_TABLES, starts);
      const eventIds = { job_events: new EventIdMemory(DEDUPE_WINDOW), page_fetches: new EventIdMemory(DEDUPE_WINDOW), items: new EventIdMemory(DEDUPE_WINDOW) };
      for (const [table, topic] of TOPIC_TABLES) await eventIds[table].load(shadow, table, startsOf(topic));
      const users = new UserMemory();
      await learnCopiedUsers(shadow, users);
      const writer = new ShadowWriter({ shadow, users, eventIds, logger: testLogger('current-clickhouse'), eventsPerInsert: 40 });
      for (let i = 0; i < ordered.length; i += 25) await writer.add(ordered.slice(i, i + 25));
      const written = await writer.flush();

      const next: Record<string, string[]> = {};
      for (const t of FACT_TABLES) next[t] = [...(await nextPositions(ch, t, shadow.database))].map(([p, o]) => `${p}:${o}`).sort();
      const shadowChecksum = await analyticsChecksum(ch, shadow.database);

      const oldDb = `${database}_old_rtest1`;
      await swapDatabases(ch, shadow, database, oldDb);
      const after = {
        live: await analyticsChecksum(ch),
        liveTables: (await ch.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = ${quote(database)} ORDER BY name`)).map((r) => r.name),
        oldTables: (await ch.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = ${quote(oldDb)} ORDER BY name`)).map((r) => r.name),
        shadowLeft: (await ch.rows<{ n: string }>(`SELECT count() AS n FROM system.tables WHERE database = ${quote(shadow.database)}`))[0]!.n,
        version: await storedVersion(ch),
        builtBy: (await ch.rows<{ b: string }>('SELECT built_by AS b FROM projection_info'))[0]!.b,
      };
      // A view follows its source table's name: rows written after the swap reach the rollups.
      const late = events.filter((e) => e.topic === 'pages').slice(0, 3).map((e) => ({ ...e, offset: e.offset + 1_000_000n }));
      await writeFacts(ch, late, users, { skipStored: true, dedupeWindow: 0n });
      const afterLate = await analyticsChecksum(ch);
      return { leftoverGone, copied, written, users: [...new Set(ordered.map((e) => (e.value as { job_id: string }).job_id))].map((j) => users.get(j) ?? ''), next, shadowChecksum, after, afterLate };
    });
    expect(a.leftoverGone).toBe(true);
    expect(a.copied).toBeGreaterThan(0);
    expect(a.written.inserted).toBeGreaterThan(0);
    // The replay rebuilds what the live path stored.
    expect(checksumDifferences(a.shadowChecksum, checksum)).toEqual([]);
    expect(checksumDifferences(a.after.live, checksum)).toEqual([]);
    expect(a.after.oldTables.length).toBe(tableNames().length);
    expect(a.after.liveTables.length).toBe(tableNames().length + 5);
    expect(a.after.builtBy).toBe('replay rtest1');
    expect(a.afterLate.pages_by_minute).not.toEqual(a.after.live.pages_by_minute);
    expect(b).toEqual(a);
  });
});
