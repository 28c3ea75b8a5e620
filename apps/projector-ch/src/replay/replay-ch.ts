/**
 * replayCh: rebuilds the analytics from the topics into a shadow database while the live
 * projector keeps writing, verifies it and swaps it in with one RENAME TABLE.
 *
 * Same handshake as the Postgres replay. The replay reads each partition up to where the live
 * tables stand (their highest stored position + 1, read from the facts themselves), in rounds.
 * Then it takes the swap lock (Postgres advisory lock; every live flush holds it shared) so no
 * flush runs, reads the last stretch up to exactly the live positions, compares the consistency
 * query of both databases, and swaps: the views are dropped, live tables are renamed away and
 * shadow tables renamed in (one statement), the views created again on the new tables. The live
 * projector's next flush checks positions against the new tables and goes on from there.
 *
 * `from: <Date>` re-projects only what happened since then: facts before it (by position, the
 * first offset at or after the time in each partition) are copied from the live tables, which
 * feeds the shadow rollups through their views too, and the log is read from there on.
 */
import pg from 'pg';
import { createKafka, createLogger, endpoints, type EventCodec, type Logger } from '@trawl/streams';
import { ClickHouse } from '../clickhouse/http-client.ts';
import { checkDatabaseName, ident, quote, uint } from '../clickhouse/sql-text.ts';
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
import { DEFAULT_TOPICS, type ProjectedTopics } from '../topics.ts';
import { readRanges, rangeKey, type PartitionRange } from '@trawl/streams';
import { offsetsAt, watermarks } from '@trawl/streams';
import { ProgressTracker, stderrProgress, type ProgressSink } from '@trawl/streams';

type Kafka = ReturnType<typeof createKafka>;

export interface ReplayChOptions {
  /** `earliest` (default) or a time: re-project from there, keep the live facts before it. */
  readonly from?: 'earliest' | Date;
  readonly clickhouseUrl?: string;
  readonly database?: string;
  /** Postgres for the replay and swap locks; `null` when no live projector runs (no coordination). */
  readonly databaseUrl?: string | null;
  readonly kafka?: Kafka;
  /** Default: `analyticsCodec()`, which decodes only the fields the facts keep. */
  readonly codec?: EventCodec;
  readonly logger?: Logger;
  readonly topics?: ProjectedTopics;
  /** Events per insert. Default 50,000. */
  readonly batchSize?: number;
  /** Events left below which the live projector is paused and the swap done. Default 20,000. */
  readonly swapThreshold?: number;
  readonly maxRounds?: number;
  readonly verify?: boolean;
  readonly keepOld?: boolean;
  readonly progress?: ProgressSink | null;
  readonly signal?: AbortSignal;
}

export interface ReplayChReport {
  readonly projection: string;
  readonly replayId: string;
  readonly database: string;
  readonly events: number;
  readonly undecodable: number;
  /** Fact rows kept from the live tables (before `from`). */
  readonly copied: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly pausedMs: number;
  readonly offsets: readonly { topic: string; partition: number; nextOffset: string }[];
  readonly checksum: AnalyticsChecksum;
  readonly verified: 'live' | 'no live tables' | 'version change' | 'disabled';
  readonly previousVersion: number | null;
}

/** Jobs whose user a replay remembers (the live projector's memory holds 100,000). */
const REPLAY_JOBS_REMEMBERED = 1_000_000;

/** Events read and turned into rows at a time (see ShadowWriter: few enough to die young). */
const READ_CHUNK = 1_000;

const TABLE_OF_TOPIC = (t: ProjectedTopics): [FactTable, string][] => [['job_events', t.jobs], ['page_fetches', t.pages], ['items', t.items]];

/** A rangeKey taken apart: topic and partition. */
function splitKey(key: string): { topic: string; partition: number } {
  const i = key.lastIndexOf(':');
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

/** One topic's positions, by partition. */
function positionsOf(positions: Map<string, bigint>, topic: string): Map<number, bigint> {
  const out = new Map<number, bigint>();
  for (const [key, offset] of positions) {
    const k = splitKey(key);
    if (k.topic === topic) out.set(k.partition, offset);
  }
  return out;
}

function rangesFrom(positions: Map<string, bigint>, to: Map<string, bigint>): PartitionRange[] {
  return [...to].map(([key, end]) => ({ ...splitKey(key), from: positions.get(key) ?? 0n, to: end }));
}
const remaining = (ranges: readonly PartitionRange[]): number => ranges.reduce((s, r) => s + Math.max(0, Number(r.to - r.from)), 0);

export async function replayCh(options: ReplayChOptions = {}): Promise<ReplayChReport> {
  const ep = endpoints();
  const logger = options.logger ?? createLogger('replay-ch');
  const database = checkDatabaseName(options.database ?? ep.clickhouseDatabase);
  const ch = new ClickHouse({ url: options.clickhouseUrl ?? ep.clickhouseUrl, database, timeoutMs: 300_000 });
  const kafka = options.kafka ?? createKafka({ clientId: 'trawl-replay-ch', logger });
  const codec = options.codec ?? analyticsCodec();
  const topics = options.topics ?? DEFAULT_TOPICS;
  const topicTables = TABLE_OF_TOPIC(topics);
  const topicNames = topicTables.map(([, topic]) => topic);
  const batchSize = options.batchSize ?? 50_000;
  const swapThreshold = options.swapThreshold ?? 20_000;
  const maxRounds = options.maxRounds ?? 10;
  const progress = new ProgressTracker(options.progress === null ? undefined : (options.progress ?? stderrProgress('ch')));
  const started = Date.now();
  const replayId = `r${started.toString(36)}`;
  const shadowDb = checkDatabaseName(`${database}_${replayId}`);
  const oldDb = checkDatabaseName(`${database}_old_${replayId}`);
  const shadow = ch.withDatabase(shadowDb);

  const locks = options.databaseUrl === null ? undefined : new pg.Client({ connectionString: options.databaseUrl ?? ep.databaseUrl, application_name: 'trawl-replay-ch' });
  if (locks) {
    await locks.connect();
    const { rows } = await locks.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [CH_REPLAY_LOCK]);
    if (!rows[0]?.ok) {
      await locks.end();
      throw new ReplayInProgressError('another replay of the ClickHouse analytics is running');
    }
  }
  let swapped = false;
  let writer: ShadowWriter | undefined;
  try {
    await createDatabase(ch, database);
    await dropLeftovers(ch, database, logger);
    const previous = await storedVersion(ch, database);
    if (previous !== undefined && previous > PROJECTION_VERSION) {
      throw new ProjectionVersionMismatchError(`the live analytics are version ${previous}, newer than this replay's version ${PROJECTION_VERSION}`);
    }
    await applySchema(shadow);
    await recordVersion(shadow, `replay ${replayId}`);

    // Where to start: the beginning of the log, or the first position at or after `from`.
    const wm = await watermarks(kafka, topicNames);
    const positions = new Map<string, bigint>(wm.map((w) => [rangeKey(w.topic, w.partition), w.low]));
    let copied = 0;
    if (options.from instanceof Date) {
      if (Number.isNaN(options.from.getTime())) throw new ReplayOptionsError('from must be `earliest` or a valid time');
      const at = await offsetsAt(kafka, topicNames, options.from);
      for (const [k, o] of at) positions.set(k, o);
      if (previous !== undefined && previous !== PROJECTION_VERSION) {
        throw new ReplayOptionsError(`a replay from a time keeps the live facts before it, but they are version ${previous}: replay from earliest`);
      }
      if (previous !== undefined) copied = await copyPrefix(ch, shadow, database, topicTables, positions);
    }
    // The shadow's only writer is this replay, in offset order: it answers the events' id check
    // from memory (what it copied over, then what it writes) instead of a query per batch.
    const eventIds = { job_events: new EventIdMemory(DEDUPE_WINDOW), page_fetches: new EventIdMemory(DEDUPE_WINDOW), items: new EventIdMemory(DEDUPE_WINDOW) };
    if (copied > 0) for (const [table, topic] of topicTables) await eventIds[table].load(shadow, table, positionsOf(positions, topic));

    /** Where each partition's replay ends: the live tables' next positions, or the log's end when nothing is live. */
    const targets = async (): Promise<{ to: Map<string, bigint>; high: Map<string, bigint> }> => {
      const now = await watermarks(kafka, topicNames);
      const high = new Map(now.map((w) => [rangeKey(w.topic, w.partition), w.high]));
      if (previous === undefined) return { to: high, high };
      const to = new Map<string, bigint>(now.map((w) => [rangeKey(w.topic, w.partition), 0n]));
      let any = false;
      // Read in the reverse of the order a live flush inserts (FACT_TABLES: job events, then
      // pages, then items): a flush that lands between two of these reads then shows in the later
      // tables' positions only if it shows in the earlier ones too. In the insert order, a page
      // position read after a flush could cover pages whose job events the job position, read
      // before it, did not: the replay wrote those pages without their job's user, for good.
      const topicOf = new Map(topicTables);
      for (const table of [...FACT_TABLES].reverse()) {
        const topic = topicOf.get(table)!;
        for (const [p, next] of await nextPositions(ch, table, database)) {
          to.set(rangeKey(topic, p), next);
          any = true;
        }
      }
      return any ? { to, high } : { to: high, high };
    };

    // The replay reads every job event before the pages (below), so its memory must hold the jobs
    // of the whole log, not only those in flight as the live projector's does (~150 bytes a job).
    const users = new UserMemory(REPLAY_JOBS_REMEMBERED);
    if (copied > 0) await learnCopiedUsers(shadow, users);
    writer = new ShadowWriter({ shadow, users, eventIds, logger, eventsPerInsert: batchSize });
    let undecodable = 0;
    // Job events first, on their own: page facts carry their job's user, learnt from its job
    // events, so those must be known before the pages are read (the topics would otherwise
    // interleave as the fetches happen to return them). The jobs topic is small.
    const read = async (ranges: PartitionRange[]): Promise<void> => {
      await readPass(ranges.filter((r) => r.topic === topics.jobs));
      await readPass(ranges.filter((r) => r.topic !== topics.jobs));
    };
    const readPass = async (ranges: PartitionRange[]): Promise<void> => {
      const r = await readRanges({
        kafka, codec, ranges, batchSize: READ_CHUNK, signal: options.signal,
        onBatch: async (events) => {
          await writer!.add(events);
          for (const e of events) {
            const k = rangeKey(e.topic, e.partition);
            if ((positions.get(k) ?? 0n) <= e.offset) positions.set(k, e.offset + 1n);
          }
          progress.add(events.length);
        },
        onUndecodable: (where, err) => logger.warn({ ...where, offset: String(where.offset), err: err.message }, 'undecodable message skipped'),
      });
      // Everything read is stored before the round's positions count.
      await writer!.flush();
      undecodable += r.undecodable;
    };

    progress.enter('catch-up', previous === undefined ? 'up to the end of the log' : 'up to the positions of the live tables');
    let rounds = 0;
    for (;;) {
      const t = await targets();
      const ranges = rangesFrom(positions, t.to);
      progress.lag = [...t.high].reduce((s, [k, h]) => s + Math.max(0, Number(h - (positions.get(k) ?? 0n))), 0);
      if (remaining(ranges) <= swapThreshold || rounds >= maxRounds) break;
      rounds++;
      await read(ranges);
    }

    progress.enter('swap', 'pausing the live projector');
    if (locks) await locks.query('SELECT pg_advisory_lock(hashtext($1))', [CH_SWAP_LOCK]);
    const pausedAt = Date.now();
    let checksum: AnalyticsChecksum;
    let verified: ReplayChReport['verified'];
    try {
      const t = await targets();
      await read(rangesFrom(positions, t.to));
      checksum = await analyticsChecksum(shadow);
      if (options.verify === false) verified = 'disabled';
      else if (previous === undefined) verified = 'no live tables';
      else if (previous !== PROJECTION_VERSION) verified = 'version change';
      else {
        const live = await analyticsChecksum(ch);
        const diff = checksumDifferences(checksum, live);
        if (diff.length > 0) throw new ReplayVerificationError(`replayed analytics differ from the live ones at the same positions: ${diff.join(', ')}`, { replayed: checksum, live });
        verified = 'live';
      }
      await swapDatabases(ch, shadow, database, oldDb);
      swapped = true;
    } finally {
      if (locks) await locks.query('SELECT pg_advisory_unlock(hashtext($1))', [CH_SWAP_LOCK]).catch(() => undefined);
    }
    const pausedMs = Date.now() - pausedAt;
    await ch.exec(`DROP DATABASE IF EXISTS ${ident(shadowDb)}`, { database: null });
    if (!options.keepOld) await ch.exec(`DROP DATABASE IF EXISTS ${ident(oldDb)}`, { database: null });

    const seconds = (Date.now() - started) / 1000;
    progress.enter('done', `swapped in ${pausedMs} ms, verified: ${verified}`);
    return {
      projection: projectionName(),
      replayId,
      database,
      events: progress.events,
      undecodable,
      copied,
      rounds,
      seconds,
      eventsPerSecond: progress.events / seconds,
      pausedMs,
      offsets: [...positions].map(([k, v]) => ({ ...splitKey(k), nextOffset: String(v) })),
      checksum,
      verified,
      previousVersion: previous ?? null,
    };
  } finally {
    // A replay that failed mid-read may still have an insert retrying: stop it before the drop.
    await writer?.close();
    if (!swapped) await ch.exec(`DROP DATABASE IF EXISTS ${ident(shadowDb)}`, { database: null }).catch(() => undefined);
    if (locks) {
      await locks.query('SELECT pg_advisory_unlock(hashtext($1))', [CH_REPLAY_LOCK]).catch(() => undefined);
      await locks.end().catch(() => undefined);
    }
    await ch.close();
    await shadow.close();
  }
}

/** The users of the jobs whose events a replay from a time copied instead of reading. */
async function learnCopiedUsers(shadow: ClickHouse, users: UserMemory): Promise<void> {
  const rows = await shadow.rows<{ job_id: string; user_id: string }>(
    `SELECT job_id, user_id FROM job_events WHERE user_id != '' AND event IN ('CrawlRequested', 'JobDispatched', 'JobCancelled') ORDER BY _partition, _offset`,
  );
  for (const r of rows) users.remember(r.job_id, r.user_id);
}

/** Shadow and old databases of replays that crashed or kept them; called under the replay lock. */
async function dropLeftovers(ch: ClickHouse, database: string, logger: Logger): Promise<void> {
  const rows = await ch.rows<{ name: string }>(`SELECT name FROM system.databases WHERE startsWith(name, ${quote(`${database}_`)})`, { database: null });
  const pattern = new RegExp(`^${database}_(old_)?r[a-z0-9]+$`);
  for (const { name } of rows.filter((r) => pattern.test(r.name))) {
    logger.info({ database: name }, 'dropping a database left by an earlier replay');
    await ch.exec(`DROP DATABASE IF EXISTS ${ident(name)}`, { database: null });
  }
}

/** Copies the live facts before the start positions into the shadow (their views fill its rollups). */
async function copyPrefix(live: ClickHouse, shadow: ClickHouse, database: string, topicTables: [FactTable, string][], positions: Map<string, bigint>): Promise<number> {
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
async function swapDatabases(ch: ClickHouse, shadow: ClickHouse, database: string, oldDb: string): Promise<void> {
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
