/**
 * replayCh: rebuilds the analytics from the topics into a shadow database while the live
 * projector keeps writing, verifies it and swaps it in with one RENAME TABLE. The protocol
 * (rounds up to the live positions, the hold, the check, the report) is streams' replayAndSwap;
 * this is its ClickHouse target.
 *
 * The live positions are read from the facts themselves (their highest stored position + 1). The
 * hold is the swap lock (a Postgres advisory lock; every live flush holds it shared), so no flush
 * runs while the last stretch is read, the consistency queries compared and the databases
 * swapped: the views are dropped, live tables renamed away and shadow tables renamed in (one
 * statement), the views created again on the new tables. The live projector's next flush checks
 * positions against the new tables and goes on from there.
 *
 * `from: <Date>` re-projects only what happened since then: facts before it (by position, the
 * first offset at or after the time in each partition) are copied from the live tables, which
 * feeds the shadow rollups through their views too, and the log is read from there on.
 */
import pg from 'pg';
import {
  endpoints, rangeKey, replayAndSwap, replayIdOf, DEFAULT_PROJECTED_TOPICS, offsetsAt,
  type Logger, type Positions, type ProjectedTopics, type ReplayOptions, type ReplayReport, type ReplayTarget, createLogger,
} from '@trawl/streams';
import { ClickHouse, checkDatabaseName, ident, quote, uint } from '@trawl/clickhouse';
import { applySchema, createDatabase, databaseExists, recordVersion, storedVersion, tableNames, viewStatements } from '../schema/analytics-schema.ts';
import { analyticsCodec, FACT_TABLES, type FactTable } from '../model/fact-rows.ts';
import { UserMemory } from '../model/tsv-batch.ts';
import { DEDUPE_WINDOW } from '../model/event-identity.ts';
import { ShadowWriter } from './shadow-writer.ts';
import { EventIdMemory } from '../projector/event-id-memory.ts';
import { nextPositions } from '../projector/positions.ts';
import { CH_REPLAY_LOCK, CH_SWAP_LOCK } from '../projector/swap-lock.ts';
import { analyticsChecksum, checksumDifferences, type AnalyticsChecksum } from '../queries/consistency.ts';
import { PROJECTION_VERSION, projectionName } from '../version.ts';
import { ProjectionVersionMismatchError, ReplayInProgressError, ReplayOptionsError, ReplayVerificationError } from '../errors.ts';

export interface ReplayChOptions extends ReplayOptions {
  /** `earliest` (default) or a time: re-project from there, keep the live facts before it. */
  readonly from?: 'earliest' | Date;
  readonly clickhouseUrl?: string;
  readonly database?: string;
  /** Postgres for the replay and swap locks; `null` when no live projector runs (no coordination). */
  readonly databaseUrl?: string | null;
  /** Default: `analyticsCodec()`, which decodes only the fields the facts keep. */
  readonly codec?: ReplayOptions['codec'];
  readonly topics?: ProjectedTopics;
  /** Events per insert. Default 50,000. */
  readonly batchSize?: number;
  /** Events left below which the live projector is paused and the swap done. Default 20,000. */
  readonly swapThreshold?: number;
}

export type ReplayChReport = ReplayReport<AnalyticsChecksum> & {
  readonly database: string;
  /** Fact rows kept from the live tables (before `from`). */
  readonly copied: number;
};

/** Jobs whose user a replay remembers (the live projector's memory holds 100,000). */
const REPLAY_JOBS_REMEMBERED = 1_000_000;

/** Events read and turned into rows at a time (see ShadowWriter: few enough to die young). */
const READ_CHUNK = 1_000;

const TABLE_OF_TOPIC = (t: ProjectedTopics): [FactTable, string][] => [['job_events', t.jobs], ['page_fetches', t.pages], ['items', t.items]];

/** One topic's positions, by partition. */
function positionsOf(positions: Positions, topic: string): Map<number, bigint> {
  const out = new Map<number, bigint>();
  for (const [key, offset] of positions) {
    const i = key.lastIndexOf(':');
    if (key.slice(0, i) === topic) out.set(Number(key.slice(i + 1)), offset);
  }
  return out;
}

export async function replayCh(options: ReplayChOptions = {}): Promise<ReplayChReport> {
  if (options.from instanceof Date && Number.isNaN(options.from.getTime())) throw new ReplayOptionsError('from must be `earliest` or a valid time');
  const logger = options.logger ?? createLogger('replay-ch');
  const target = chReplayTarget({ ...options, logger });
  const report = await replayAndSwap(target, { ...options, logger, codec: options.codec ?? analyticsCodec() });
  return { ...report, database: target.database, copied: target.copied };
}

/**
 * The ClickHouse analytics as a replay target: a shadow database `<database>_<replay id>` with the
 * whole schema, written by a ShadowWriter (job events read in a pass before the pages, which carry
 * their job's user); the live projector held back by the swap lock (a Postgres advisory lock every
 * live flush holds shared); one RENAME TABLE for the swap. A replay `from` a time copies the live
 * facts before it instead of reading them.
 */
function chReplayTarget(options: ReplayChOptions & { logger: Logger }): ReplayTarget<AnalyticsChecksum> & { readonly database: string; readonly copied: number } {
  const ep = endpoints();
  const { logger } = options;
  const database = checkDatabaseName(options.database ?? ep.clickhouseDatabase);
  const ch = new ClickHouse({ url: options.clickhouseUrl ?? ep.clickhouseUrl, database, timeoutMs: 300_000 });
  const topics = options.topics ?? DEFAULT_PROJECTED_TOPICS;
  const topicTables = TABLE_OF_TOPIC(topics);
  const replayId = replayIdOf(Date.now());
  const shadowDb = checkDatabaseName(`${database}_${replayId}`);
  const oldDb = checkDatabaseName(`${database}_old_${replayId}`);
  const shadow = ch.withDatabase(shadowDb);
  const locks = options.databaseUrl === null ? undefined : new pg.Client({ connectionString: options.databaseUrl ?? ep.databaseUrl, application_name: 'trawl-replay-ch' });
  let locked = false;
  // The shadow's only writer is this replay, in offset order: it answers the events' id check
  // from memory (what it copied over, then what it writes) instead of a query per batch.
  const eventIds = { job_events: new EventIdMemory(DEDUPE_WINDOW), page_fetches: new EventIdMemory(DEDUPE_WINDOW), items: new EventIdMemory(DEDUPE_WINDOW) };
  // The replay reads every job event before the pages (passes), so its memory must hold the jobs
  // of the whole log, not only those in flight as the live projector's does (~150 bytes a job).
  const users = new UserMemory(REPLAY_JOBS_REMEMBERED);
  const writer = new ShadowWriter({ shadow, users, eventIds, logger, eventsPerInsert: options.batchSize ?? 50_000 });
  let copied = 0;

  return {
    label: 'ch',
    replayId,
    projection: projectionName(),
    version: PROJECTION_VERSION,
    topics: topicTables.map(([, topic]) => topic),
    exactLivePositions: false,
    defaults: { batchSize: 50_000, swapThreshold: 20_000 },
    readChunk: READ_CHUNK,
    database,
    get copied() {
      return copied;
    },
    liveLabel: () => 'the positions of the live tables',
    async lock() {
      if (!locks) return;
      await locks.connect();
      const { rows } = await locks.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [CH_REPLAY_LOCK]);
      if (!rows[0]?.ok) throw new ReplayInProgressError('another replay of the ClickHouse analytics is running');
      locked = true;
    },
    async inspect() {
      await createDatabase(ch, database);
      await dropLeftovers(ch, database, logger);
      return storedVersion(ch, database);
    },
    async createShadow() {
      await applySchema(shadow);
      await recordVersion(shadow, `replay ${replayId}`);
    },
    async startFrom(at, { positions, previousVersion: previous, kafka }) {
      const topicNames = topicTables.map(([, topic]) => topic);
      for (const [k, o] of await offsetsAt(kafka, topicNames, at)) positions.set(k, o);
      if (previous !== undefined && previous !== PROJECTION_VERSION) {
        throw new ReplayOptionsError(`a replay from a time keeps the live facts before it, but they are version ${previous}: replay from earliest`);
      }
      if (previous !== undefined) copied = await copyPrefix(ch, shadow, database, topicTables, positions);
      if (copied > 0) {
        for (const [table, topic] of topicTables) await eventIds[table].load(shadow, table, positionsOf(positions, topic));
        await learnCopiedUsers(shadow, users);
      }
    },
    async liveTargets(previous) {
      if (previous === undefined) return undefined;
      const to: Positions = new Map();
      // Read in the reverse of the order a live flush inserts (FACT_TABLES: job events, then
      // pages, then items): a flush that lands between two of these reads then shows in the later
      // tables' positions only if it shows in the earlier ones too. In the insert order, a page
      // position read after a flush could cover pages whose job events the job position, read
      // before it, did not: the replay wrote those pages without their job's user, for good.
      const topicOf = new Map(topicTables);
      for (const table of [...FACT_TABLES].reverse()) {
        const topic = topicOf.get(table)!;
        for (const [p, next] of await nextPositions(ch, table, database)) to.set(rangeKey(topic, p), next);
      }
      return to;
    },
    // Job events first, on their own: page facts carry their job's user, learnt from its job
    // events, so those must be known before the pages are read (the topics would otherwise
    // interleave as the fetches happen to return them). The jobs topic is small.
    passes: (ranges) => [ranges.filter((r) => r.topic === topics.jobs), ranges.filter((r) => r.topic !== topics.jobs)],
    apply: (events) => writer.add(events),
    async flush() {
      await writer.flush();
    },
    async holdLive() {
      if (locks) await locks.query('SELECT pg_advisory_lock(hashtext($1))', [CH_SWAP_LOCK]);
    },
    async releaseLive() {
      if (locks) await locks.query('SELECT pg_advisory_unlock(hashtext($1))', [CH_SWAP_LOCK]).catch(() => undefined);
    },
    checksum: (which) => analyticsChecksum(which === 'shadow' ? shadow : ch),
    differences: checksumDifferences,
    swap: () => swapDatabases(ch, shadow, database, oldDb),
    async dropOld(keepOld) {
      await ch.exec(`DROP DATABASE IF EXISTS ${ident(shadowDb)}`, { database: null });
      if (!keepOld) await ch.exec(`DROP DATABASE IF EXISTS ${ident(oldDb)}`, { database: null });
    },
    async cleanup(swapped) {
      // A replay that failed mid-read may still have an insert retrying: stop it before the drop.
      await writer.close();
      if (!swapped) await ch.exec(`DROP DATABASE IF EXISTS ${ident(shadowDb)}`, { database: null }).catch(() => undefined);
      if (locks) {
        if (locked) await locks.query('SELECT pg_advisory_unlock(hashtext($1))', [CH_REPLAY_LOCK]).catch(() => undefined);
        await locks.end().catch(() => undefined);
      }
      await ch.close();
      await shadow.close();
    },
    errors: {
      newerLive: (version) => new ProjectionVersionMismatchError(`the live analytics are version ${version}, newer than this replay's version ${PROJECTION_VERSION}`),
      verification: (diff, checksums) => new ReplayVerificationError(`replayed analytics differ from the live ones at the same positions: ${diff.join(', ')}`, checksums),
    },
  };
}

/** The users of the jobs whose events a replay from a time copied instead of reading. */
export async function learnCopiedUsers(shadow: ClickHouse, users: UserMemory): Promise<void> {
  const rows = await shadow.rows<{ job_id: string; user_id: string }>(
    `SELECT job_id, user_id FROM job_events WHERE user_id != '' AND event IN ('CrawlRequested', 'JobDispatched', 'JobCancelled') ORDER BY _partition, _offset`,
  );
  for (const r of rows) users.remember(r.job_id, r.user_id);
}

/** Shadow and old databases of replays that crashed or kept them; called under the replay lock. */
export async function dropLeftovers(ch: ClickHouse, database: string, logger: Logger): Promise<void> {
  const rows = await ch.rows<{ name: string }>(`SELECT name FROM system.databases WHERE startsWith(name, ${quote(`${database}_`)})`, { database: null });
  const pattern = new RegExp(`^${database}_(old_)?r[a-z0-9]+$`);
  for (const { name } of rows.filter((r) => pattern.test(r.name))) {
    logger.info({ database: name }, 'dropping a database left by an earlier replay');
    await ch.exec(`DROP DATABASE IF EXISTS ${ident(name)}`, { database: null });
  }
}

/** Copies the live facts before the start positions into the shadow (their views fill its rollups). */
export async function copyPrefix(live: ClickHouse, shadow: ClickHouse, database: string, topicTables: [FactTable, string][], positions: Map<string, bigint>): Promise<number> {
  let copied = 0;
  for (const [table, topic] of topicTables) {
    const starts = [...positionsOf(positions, topic)];
    if (starts.length === 0) continue;
    const ps = starts.map(([p]) => `toUInt32(${uint(p)})`).join(', ');
    const os = starts.map(([, o]) => `toUInt64(${uint(o)})`).join(', ');
    const where = `_offset < transform(_partition, [${ps}], [${os}], toUInt64(0))`;
    await shadow.exec(`INSERT INTO ${ident(table)} SELECT * FROM ${ident(database)}.${ident(table)} FINAL WHERE ${where}`);
    const [r] = await live.rows<{ n: string }>(`SELECT count() AS n FROM ${ident(shadow.database)}.${ident(table)}`);
    copied += Number(r?.n ?? 0);
  }
  return copied;
}

/**
 * The swap, with no flush running: views off, one RENAME TABLE for every table (live → old,
 * shadow → live), views on again over the new tables. A view follows a table's name, not the
 * table, so the views are re-created rather than renamed.
 */
export async function swapDatabases(ch: ClickHouse, shadow: ClickHouse, database: string, oldDb: string): Promise<void> {
  const views = viewStatements();
  const tables = tableNames();
  const existing = new Set((await ch.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = ${quote(database)}`)).map((r) => r.name));
  const renames: string[] = [];
  if (tables.some((t) => existing.has(t))) await createDatabase(ch, oldDb);
  for (const t of tables) {
    if (existing.has(t)) renames.push(`${ident(database)}.${ident(t)} TO ${ident(oldDb)}.${ident(t)}`);
    renames.push(`${ident(shadow.database)}.${ident(t)} TO ${ident(database)}.${ident(t)}`);
  }
  for (const v of views) {
    await ch.exec(`DROP TABLE IF EXISTS ${ident(database)}.${ident(v.name)}`, { database: null });
    await ch.exec(`DROP TABLE IF EXISTS ${ident(shadow.database)}.${ident(v.name)}`, { database: null });
  }
  try {
    await ch.exec(`RENAME TABLE ${renames.join(', ')}`, { database: null });
  } finally {
    // Whatever happened to the renames, the live database gets its views back.
    for (const v of views) await ch.exec(v.sql);
  }
  if (!(await databaseExists(ch, database))) throw new Error(`database ${database} vanished during the swap`);
}
