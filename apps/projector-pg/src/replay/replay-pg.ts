/**
 * replayPg: rebuilds the Postgres read models from the topics into shadow tables while the live
 * projector keeps serving, verifies them and swaps them in with one transaction of renames.
 *
 * How it meets the live projector. The replay reads each partition up to the live projector's
 * stored offset (never past it), in rounds, since that offset moves. When little is left it
 * takes the swap lock exclusively: the live batch in flight commits, the next one waits. Under
 * the lock the live offsets no longer move; the replay reads the last stretch up to exactly
 * them, so shadow and live tables hold the same events and their checksums must be equal. Then
 * it renames (live → old, shadow → live) and commits; the waiting live batch goes on, into the
 * new tables, from the offsets it already had. Nothing is applied twice or skipped.
 *
 * With no live projector (a fresh database, a benchmark) the replay reads to the end of the log
 * and stores its offsets for the live projector to start from. A replay built by a newer
 * projection version stores that version's offsets, and the older live projector, finding a newer
 * version swapped in, stops (ProjectionSupersededError) so the new one can take over.
 */
import type pg from 'pg';
import { createLogger, createKafka, EventCodec, ensureOffsetsTable, readProjectionOffsets, type Logger } from '@trawl/streams';
import { createPool, migrate } from '@trawl/store';
import { MIGRATION_OWNER, PG_MIGRATIONS } from '../migrations.ts';
import { PROJECTION, PROJECTION_VERSION, projectionName } from '../version.ts';
import { ProjectionVersionMismatchError, ReplayInProgressError, ReplayOptionsError, ReplayVerificationError } from '../errors.ts';
import { applyBatch } from '../projector/apply-batch.ts';
import { indexDdl, keyDdl, tableDdl } from '../sql/ddl.ts';
import { BulkBuilder, stageNames } from './bulk-build.ts';
import { explainReplayFailure } from './replay-failure.ts';
import { LIVE_TABLES, ident, suffixedTables, tableList, type TableSet } from '../sql/tables.ts';
import { checksumDifferences, tableSetChecksum, type TableSetChecksum } from '../sql/checksum.ts';
import { EXCLUSIVE_SWAP_LOCK_SQL, PG_REPLAY_LOCK } from '../sql/locks.ts';
import { liveVersion } from '../sql/read-model-setup.ts';
import { DEFAULT_TOPICS, topicList, type ProjectedTopics } from '../topics.ts';
import { readRanges, rangeKey, type PartitionRange, type RangeEvent } from '@trawl/streams';
import { watermarks } from '@trawl/streams';
import { ProgressTracker, stderrProgress, type ProgressSink } from '@trawl/streams';

type Kafka = ReturnType<typeof createKafka>;

export interface ReplayPgOptions {
  /** Only `earliest`: a job's row folds all its events, so a replay from a later point would build wrong rows. */
  readonly from?: 'earliest' | Date;
  readonly pool?: pg.Pool;
  readonly kafka?: Kafka;
  readonly codec?: EventCodec;
  readonly logger?: Logger;
  readonly topics?: ProjectedTopics;
  /** Events per shadow transaction. Default 5000. */
  readonly batchSize?: number;
  /** Events left to read below which the replay pauses the live projector and swaps. Default 5000. */
  readonly swapThreshold?: number;
  /** Catch-up rounds before the replay swaps whatever is left (a fast live log may never get below the threshold). Default 10. */
  readonly maxRounds?: number;
  /** Compare with the live tables (same version only). Default true. */
  readonly verify?: boolean;
  /** Keep the replaced tables as `<name>__old_<id>` instead of dropping them. Default false. */
  readonly keepOld?: boolean;
  /** Default: a line on stderr each second. Pass `null` for silence. */
  readonly progress?: ProgressSink | null;
  readonly signal?: AbortSignal;
}

export interface ReplayOffset {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: string;
}

export interface ReplayPgReport {
  readonly projection: string;
  readonly replayId: string;
  readonly events: number;
  readonly undecodable: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  /** How long the live projector was held back for the last stretch, verification and swap. */
  readonly pausedMs: number;
  readonly offsets: readonly ReplayOffset[];
  readonly checksum: TableSetChecksum;
  /** 'live': equal to the live tables at the same offsets; otherwise why it was not compared. */
  readonly verified: 'live' | 'no live tables' | 'version change' | 'disabled';
  readonly previousVersion: number | null;
}

const SHADOW_PATTERN = /^(jobs|job_pages|job_items|job_log)__(old_)?r[a-z0-9]+(_stage)?$/;

/** Shadow, stage and old tables left by replays that crashed or kept them; called under the replay lock. */
async function dropLeftovers(db: pg.Pool, logger: Logger): Promise<void> {
  const { rows } = await db.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`);
  const stale = rows.map((r) => r.tablename).filter((n) => SHADOW_PATTERN.test(n));
  if (stale.length > 0) {
    logger.info({ tables: stale }, 'dropping tables left by an earlier replay');
    await db.query(`DROP TABLE IF EXISTS ${stale.map(ident).join(', ')}`);
  }
}

/** Where each partition's replay ends: the live projector's stored offsets, or the end of the log when nothing is live. */
async function targets(db: Pick<pg.ClientBase, 'query'>, kafka: Kafka, topics: readonly string[], liveName: string | undefined): Promise<{ to: Map<string, bigint>; high: Map<string, bigint>; capped: boolean }> {
  const wm = await watermarks(kafka, topics);
  const high = new Map(wm.map((w) => [rangeKey(w.topic, w.partition), w.high]));
  const stored = liveName ? (await readProjectionOffsets(db, liveName)).filter((o) => topics.includes(o.topic)) : [];
  if (stored.length === 0) return { to: high, high, capped: false };
  const to = new Map<string, bigint>();
  for (const w of wm) to.set(rangeKey(w.topic, w.partition), 0n);
  for (const o of stored) to.set(rangeKey(o.topic, o.partition), o.nextOffset);
  return { to, high, capped: true };
}

function rangesFrom(positions: Map<string, bigint>, to: Map<string, bigint>): PartitionRange[] {
  return [...to].map(([key, end]) => {
    const i = key.lastIndexOf(':');
    return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)), from: positions.get(key) ?? 0n, to: end };
  });
}

const remaining = (ranges: readonly PartitionRange[]): number => ranges.reduce((s, r) => s + Math.max(0, Number(r.to - r.from)), 0);
const lagOf = (positions: Map<string, bigint>, high: Map<string, bigint>): number =>
  [...high].reduce((s, [k, h]) => s + Math.max(0, Number(h - (positions.get(k) ?? 0n))), 0);

export async function replayPg(options: ReplayPgOptions = {}): Promise<ReplayPgReport> {
  if (options.from !== undefined && options.from !== 'earliest') {
    throw new ReplayOptionsError('a Postgres replay starts at the earliest offsets: a job row folds all of its events, so a replay from a timestamp would build wrong rows');
  }
  const logger = options.logger ?? createLogger('replay-pg');
  // The bulk settle and index builds of a large log run for minutes: no statement timeout here.
  const pool = options.pool ?? createPool({ max: 4, applicationName: 'trawl-replay-pg', statementTimeoutMs: 0 });
  const kafka = options.kafka ?? createKafka({ clientId: 'trawl-replay-pg', logger });
  const codec = options.codec ?? new EventCodec();
  const projected = options.topics ?? DEFAULT_TOPICS;
  const topics = topicList(projected);
  const batchSize = options.batchSize ?? 5000;
  const swapThreshold = options.swapThreshold ?? 5000;
  const maxRounds = options.maxRounds ?? 10;
  const progress = new ProgressTracker(options.progress === null ? undefined : (options.progress ?? stderrProgress('pg')));
  const started = Date.now();
  const replayId = `r${started.toString(36)}`;
  const shadow = suffixedTables(replayId);
  const myName = projectionName(PROJECTION_VERSION);

  await migrate(pool, MIGRATION_OWNER, PG_MIGRATIONS);
  await ensureOffsetsTable(pool);
  const lockClient = await pool.connect();
  let swapped = false;
  try {
    const { rows } = await lockClient.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS ok`, [PG_REPLAY_LOCK]);
    if (!rows[0]?.ok) throw new ReplayInProgressError('another replay of the Postgres read models is running');
    await dropLeftovers(pool, logger);
    await pool.query(tableDdl(shadow));

    const previous = await liveVersion(pool);
    if (previous !== undefined && previous > PROJECTION_VERSION) {
      throw new ProjectionVersionMismatchError(`the live read models are version ${previous}, newer than this replay's version ${PROJECTION_VERSION}`);
    }
    const liveName = previous === undefined ? undefined : projectionName(previous);
    const positions = new Map<string, bigint>();
    for (const w of await watermarks(kafka, topics)) positions.set(rangeKey(w.topic, w.partition), w.low);
    let undecodable = 0;

    const advance = (events: readonly RangeEvent[]): void => {
      for (const e of events) {
        const k = rangeKey(e.topic, e.partition);
        if ((positions.get(k) ?? 0n) <= e.offset) positions.set(k, e.offset + 1n);
      }
    };
    const bulk = new BulkBuilder(pool, shadow, projected);
    await bulk.createStage();
    const failure = { db: pool, shadow, topics: projected };
    /** Row-by-row, once the shadow tables have their keys: in a transaction of its own, or the caller's. */
    const incremental = (client: pg.ClientBase | undefined) => async (events: RangeEvent[]): Promise<void> => {
      await applyIncrementally(client, events).catch(async (err: unknown) => {
        throw await explainReplayFailure(err, failure, events);
      });
    };
    const applyIncrementally = async (client: pg.ClientBase | undefined, events: RangeEvent[]): Promise<void> => {
      if (client) {
        await applyBatch(client, shadow, events);
      } else {
        const c = await pool.connect();
        try {
          // A crashed replay starts over, so its commits need not wait for the disk.
          await c.query('BEGIN');
          await c.query('SET LOCAL synchronous_commit = off');
          await applyBatch(c, shadow, events);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => undefined);
          throw err;
        } finally {
          c.release();
        }
      }
    };
    const read = async (ranges: PartitionRange[], sink: (events: RangeEvent[]) => Promise<void>): Promise<void> => {
      const r = await readRanges({
        kafka, codec, ranges, batchSize, signal: options.signal,
        onBatch: async (events) => {
          await sink(events);
          advance(events);
          progress.add(events.length);
        },
        onUndecodable: (where, err) => logger.warn({ ...where, offset: String(where.offset), err: err.message }, 'undecodable message skipped'),
      });
      undecodable += r.undecodable;
    };
    /** Reads rounds into `sink` until what is left is below the threshold (or the rounds run out). */
    let rounds = 0;
    const catchUp = async (sink: (events: RangeEvent[]) => Promise<void>, maxRoundsNow: number): Promise<void> => {
      for (let round = 0; ; round++) {
        const t = await targets(pool, kafka, topics, liveName);
        const ranges = rangesFrom(positions, t.to);
        progress.lag = lagOf(positions, t.high);
        if (remaining(ranges) <= swapThreshold || round >= maxRoundsNow) return;
        rounds++;
        await read(ranges, sink);
      }
    };

    // Catch up in bulk while the live projector (or the log's end) moves on.
    progress.enter('catch-up', liveName ? `up to the offsets of live ${liveName}` : 'up to the end of the log');
    await catchUp((events) => bulk.add(events), maxRounds);
    progress.enter('index', 'settling the bulk load and building keys and indexes');
    try {
      await bulk.finish();
      // One session, so the larger sort memory applies to every index build.
      await pool.query(`SET maintenance_work_mem = '512MB'; ${keyDdl(shadow)} ${indexDdl(shadow)} RESET maintenance_work_mem;`);
    } catch (err) {
      // Before the stage goes: a key that did not build is traced to its events through it.
      throw await explainReplayFailure(err, failure);
    }
    await bulk.dropStage();
    // What arrived meanwhile, row by row now that the keys exist.
    progress.enter('catch-up', 'the stretch that arrived while indexing');
    await catchUp(incremental(undefined), 3);

    // The last stretch, the check and the renames, with the live projector held back.
    progress.enter('swap', 'pausing the live projector');
    const client = await pool.connect();
    let pausedAt = 0;
    let checksum: TableSetChecksum | undefined;
    let verified: ReplayPgReport['verified'];
    try {
      await client.query('BEGIN');
      await client.query(EXCLUSIVE_SWAP_LOCK_SQL);
      pausedAt = Date.now();
      const t = await targets(client, kafka, topics, liveName);
      await read(rangesFrom(positions, t.to), incremental(client));
      for (const [k, end] of t.to) {
        if ((positions.get(k) ?? 0n) !== end) throw new Error(`replay position of ${k} is ${positions.get(k)}, expected ${end}`);
      }
      const liveExists = previous !== undefined;
      if (options.verify === false) verified = 'disabled';
      else if (!liveExists) verified = 'no live tables';
      else if (previous !== PROJECTION_VERSION) verified = 'version change';
      else {
        // Compared under the lock: the live tables cannot move while both are summed.
        checksum = await tableSetChecksum(client, shadow);
        const live = await tableSetChecksum(client, LIVE_TABLES);
        const diff = checksumDifferences(checksum, live);
        if (diff.length > 0) {
          throw new ReplayVerificationError(`replayed tables differ from the live ones at the same offsets: ${diff.join(', ')}`, { replayed: checksum, live });
        }
        verified = 'live';
      }
      await swapTables(client, shadow, liveExists ? suffixedTables(`old_${replayId}`) : undefined);
      await client.query(
        `INSERT INTO projection_versions (projection, version, built_by, swapped_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (projection) DO UPDATE SET version = EXCLUDED.version, built_by = EXCLUDED.built_by, swapped_at = EXCLUDED.swapped_at`,
        [PROJECTION, PROJECTION_VERSION, `replay ${replayId}`],
      );
      if (!t.capped || liveName !== myName) await storeOffsets(client, myName, positions);
      await client.query('COMMIT');
      swapped = true;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    const pausedMs = Date.now() - pausedAt;
    // Nothing to compare with: the figures are for the report, summed after the live projector was let go.
    checksum ??= await tableSetChecksum(pool, LIVE_TABLES);
    if (!options.keepOld && previous !== undefined) await pool.query(`DROP TABLE IF EXISTS ${tableList(suffixedTables(`old_${replayId}`)).map(ident).join(', ')}`);

    const seconds = (Date.now() - started) / 1000;
    progress.enter('done', `swapped in ${pausedMs} ms, verified: ${verified}`);
    return {
      projection: myName,
      replayId,
      events: progress.events,
      undecodable,
      rounds,
      seconds,
      eventsPerSecond: progress.events / seconds,
      pausedMs,
      offsets: [...positions].map(([k, v]) => ({ topic: k.slice(0, k.lastIndexOf(':')), partition: Number(k.slice(k.lastIndexOf(':') + 1)), nextOffset: String(v) })),
      checksum,
      verified,
      previousVersion: previous ?? null,
    };
  } finally {
    if (!swapped) await pool.query(`DROP TABLE IF EXISTS ${[...tableList(shadow), ...Object.values(stageNames(shadow))].map(ident).join(', ')}`).catch(() => undefined);
    await lockClient.query(`SELECT pg_advisory_unlock(hashtext($1))`, [PG_REPLAY_LOCK]).catch(() => undefined);
    lockClient.release();
    if (!options.pool) await pool.end();
  }
}

/**
 * One transaction's renames: live → old (when there are live tables), shadow → live.
 *
 * Every table's ACCESS EXCLUSIVE lock is taken first, all at once, never waiting while holding one:
 * renaming table by table would hold `jobs` while waiting for `job_log`, and a reader's join that
 * holds `job_log` and waits for `jobs` would deadlock with it (Postgres then aborts one of the two).
 */
async function swapTables(client: pg.ClientBase, shadow: TableSet, old: TableSet | undefined): Promise<void> {
  await lockAll(client, [...(old ? tableList(LIVE_TABLES) : []), ...tableList(shadow)]);
  for (const k of ['jobs', 'pages', 'items', 'log'] as const) {
    if (old) await client.query(`ALTER TABLE ${ident(LIVE_TABLES[k])} RENAME TO ${ident(old[k])}`);
    await client.query(`ALTER TABLE ${ident(shadow[k])} RENAME TO ${ident(LIVE_TABLES[k])}`);
  }
}

/** How long the swap tries to find a moment when no reader holds a table before it queues for them. */
const SWAP_LOCK_TRY_MS = 10_000;

async function lockAll(client: pg.ClientBase, tables: readonly string[]): Promise<void> {
  const lock = `LOCK TABLE ${tables.map(ident).join(', ')} IN ACCESS EXCLUSIVE MODE`;
  const deadline = Date.now() + SWAP_LOCK_TRY_MS;
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    // A failed NOWAIT rolls back to here: the locks of the statement go, the transaction stays.
    await client.query('SAVEPOINT swap_locks');
    try {
      await client.query(`${lock} NOWAIT`);
      await client.query('RELEASE SAVEPOINT swap_locks');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
      await client.query('ROLLBACK TO SAVEPOINT swap_locks');
      await new Promise((r) => setTimeout(r, Math.min(50, 2 * attempt) * (0.5 + Math.random())));
    }
  }
  // Readers never left a gap: queue for the locks like anyone else (new readers wait behind us).
  await client.query(lock);
}

const LOCK_NOT_AVAILABLE = '55P03';

async function storeOffsets(client: pg.ClientBase, projection: string, positions: Map<string, bigint>): Promise<void> {
  const entries = [...positions].map(([k, v]) => ({ topic: k.slice(0, k.lastIndexOf(':')), partition: Number(k.slice(k.lastIndexOf(':') + 1)), next: String(v) }));
  await client.query(
    `INSERT INTO stream_offsets (projection, topic, partition, next_offset)
     SELECT $1, t, p, o FROM unnest($2::text[], $3::int[], $4::bigint[]) AS u(t, p, o)
     ON CONFLICT (projection, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
    [projection, entries.map((e) => e.topic), entries.map((e) => e.partition), entries.map((e) => e.next)],
  );
}
