/**
 * replayPg: rebuilds the Postgres read models from the topics into shadow tables while the live
 * projector keeps serving, verifies them and swaps them in with one transaction of renames. The
 * protocol (rounds up to the live offsets, the hold, the check, the report) is streams'
 * replayAndSwap; this is its Postgres target.
 *
 * The live projector is held back by the swap lock taken exclusively in the transaction that
 * renames the tables: the live batch in flight commits, the next one waits, then goes on into the
 * new tables from the offsets it already had. With no live projector (a fresh database, a
 * benchmark) the replay reads to the end of the log and stores its offsets for the live projector
 * to start from. A replay built by a newer projection version stores that version's offsets, and
 * the older live projector, finding a newer version swapped in, stops (ProjectionSupersededError)
 * so the new one can take over.
 */
import type pg from 'pg';
import {
  createLogger, ensureOffsetsTable, projectedTopicList, readProjectionOffsets, replayAndSwap, replayIdOf, rangeKey, DEFAULT_PROJECTED_TOPICS,
  type Logger, type Positions, type ProjectedTopics, type RangeEvent, type ReplayOptions, type ReplayReport, type ReplayTarget,
} from '@trawl/streams';
import { createPool, migrate } from '@trawl/store';
import { MIGRATION_OWNER, PG_MIGRATIONS } from '../migrations.ts';
import { PROJECTION, PROJECTION_VERSION, projectionName } from '../version.ts';
import { ProjectionVersionMismatchError, ReplayInProgressError, ReplayOptionsError, ReplayVerificationError } from '../errors.ts';
import { applyBatch } from '../projector/apply-batch.ts';
import { indexDdl, keyDdl, tableDdl } from '../sql/ddl.ts';
import { BulkBuilder } from './bulk-build.ts';
import { explainReplayFailure } from './replay-failure.ts';
import { LIVE_TABLES, TABLE_KEYS, ident, stageNames, suffixedTables, tableList, type TableSet } from '../sql/tables.ts';
import { checksumDifferences, tableSetChecksum, type TableSetChecksum } from '../sql/checksum.ts';
import { EXCLUSIVE_SWAP_LOCK_SQL, PG_REPLAY_LOCK } from '../sql/locks.ts';
import { liveVersion } from '../sql/read-model-setup.ts';

export type { ReplayOffset } from '@trawl/streams';

export interface ReplayPgOptions extends ReplayOptions {
  /** Only `earliest`: a job's row folds all its events, so a replay from a later point would build wrong rows. */
  readonly from?: 'earliest' | Date;
  readonly pool?: pg.Pool;
  readonly topics?: ProjectedTopics;
  /** Events per shadow transaction. Default 5000. */
  readonly batchSize?: number;
  /** Events left to read below which the replay pauses the live projector and swaps. Default 5000. */
  readonly swapThreshold?: number;
  /** Keep the replaced tables as `<name>__old_<id>` instead of dropping them. Default false. */
  readonly keepOld?: boolean;
}

export type ReplayPgReport = ReplayReport<TableSetChecksum>;

const SHADOW_PATTERN = /^(jobs|job_pages|job_items|job_log|http_cache)__(old_)?r[a-z0-9]+(_stage)?$/;

/** Shadow, stage and old tables left by replays that crashed or kept them; called under the replay lock. */
async function dropLeftovers(db: pg.Pool, logger: Logger): Promise<void> {
  const { rows } = await db.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`);
  const stale = rows.map((r) => r.tablename).filter((n) => SHADOW_PATTERN.test(n));
  if (stale.length > 0) {
    logger.info({ tables: stale }, 'dropping tables left by an earlier replay');
    await db.query(`DROP TABLE IF EXISTS ${stale.map(ident).join(', ')}`);
  }
}

export async function replayPg(options: ReplayPgOptions = {}): Promise<ReplayPgReport> {
  if (options.from !== undefined && options.from !== 'earliest') {
    throw new ReplayOptionsError('a Postgres replay starts at the earliest offsets: a job row folds all of its events, so a replay from a timestamp would build wrong rows');
  }
  const logger = options.logger ?? createLogger('replay-pg');
  return replayAndSwap(pgReplayTarget({ ...options, logger }), { ...options, logger });
}

/**
 * The Postgres read models as a replay target: shadow tables `<name>__<replay id>`, filled in bulk
 * through stage tables (keys and indexes built once, in the `index` phase), then row by row; the
 * live projector held back by the exclusive swap lock in the transaction that renames the tables,
 * records the version and, for a new version or a log read to its end, stores the offsets.
 */
function pgReplayTarget(options: ReplayPgOptions & { logger: Logger }): ReplayTarget<TableSetChecksum> {
  const { logger } = options;
  // The bulk settle and index builds of a large log run for minutes: no statement timeout here.
  const pool = options.pool ?? createPool({ max: 4, applicationName: 'trawl-replay-pg', statementTimeoutMs: 0 });
  const projected = options.topics ?? DEFAULT_PROJECTED_TOPICS;
  const replayId = replayIdOf(Date.now());
  const shadow = suffixedTables(replayId);
  const myName = projectionName(PROJECTION_VERSION);
  const failure = { db: pool, shadow, topics: projected };
  const bulk = new BulkBuilder(pool, shadow, projected);
  let lockClient: pg.PoolClient | undefined;
  let previous: number | undefined;
  /** Where events go: the bulk stage until the keys exist, then row by row, under the hold in its transaction. */
  let mode: 'bulk' | 'rows' = 'bulk';
  let held: pg.PoolClient | undefined;

  /** Row-by-row, once the shadow tables have their keys: in a transaction of its own, or the held one. */
  const applyIncrementally = async (events: RangeEvent[]): Promise<void> => {
    if (held) {
      await applyBatch(held, shadow, events);
      return;
    }
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
  };

  return {
    label: 'pg',
    replayId,
    projection: myName,
    version: PROJECTION_VERSION,
    topics: projectedTopicList(projected),
    exactLivePositions: true,
    defaults: { batchSize: 5000, swapThreshold: 5000 },
    liveLabel: (version) => `the offsets of live ${projectionName(version)}`,
    async lock() {
      await migrate(pool, MIGRATION_OWNER, PG_MIGRATIONS);
      await ensureOffsetsTable(pool);
      lockClient = await pool.connect();
      const { rows } = await lockClient.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS ok`, [PG_REPLAY_LOCK]);
      if (!rows[0]?.ok) throw new ReplayInProgressError('another replay of the Postgres read models is running');
    },
    async inspect() {
      await dropLeftovers(pool, logger);
      previous = await liveVersion(pool);
      return previous;
    },
    async createShadow() {
      await pool.query(tableDdl(shadow));
      await bulk.createStage();
    },
    async liveTargets(version) {
      if (version === undefined) return undefined;
      const topics = projectedTopicList(projected);
      const stored = (await readProjectionOffsets(held ?? pool, projectionName(version))).filter((o) => topics.includes(o.topic));
      return new Map(stored.map((o) => [rangeKey(o.topic, o.partition), o.nextOffset]));
    },
    async apply(events) {
      if (mode === 'bulk') return bulk.add(events);
      await applyIncrementally(events).catch(async (err: unknown) => {
        throw await explainReplayFailure(err, failure, events);
      });
    },
    settle: {
      note: 'settling the bulk load and building keys and indexes',
      rounds: 3,
      async run() {
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
        mode = 'rows';
      },
    },
    async holdLive() {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(EXCLUSIVE_SWAP_LOCK_SQL);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
        throw err;
      }
      held = client;
    },
    async releaseLive(swapped) {
      const client = held;
      held = undefined;
      if (!client) return;
      try {
        if (swapped) await client.query('COMMIT');
        else await client.query('ROLLBACK');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    checksum: (which) => tableSetChecksum(held ?? pool, which === 'shadow' ? shadow : LIVE_TABLES),
    differences: checksumDifferences,
    async swap({ positions, capped }) {
      const client = held!;
      await swapTables(client, shadow, previous !== undefined ? suffixedTables(`old_${replayId}`) : undefined);
      await client.query(
        `INSERT INTO projection_versions (projection, version, built_by, swapped_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (projection) DO UPDATE SET version = EXCLUDED.version, built_by = EXCLUDED.built_by, swapped_at = EXCLUDED.swapped_at`,
        [PROJECTION, PROJECTION_VERSION, `replay ${replayId}`],
      );
      // The live projector of this version goes on from its own offsets; a new version, or a log read to its end, starts from the replay's.
      const liveName = previous === undefined ? undefined : projectionName(previous);
      if (!capped || liveName !== myName) await storeOffsets(client, myName, positions);
    },
    async dropOld(keepOld) {
      if (!keepOld && previous !== undefined) await pool.query(`DROP TABLE IF EXISTS ${tableList(suffixedTables(`old_${replayId}`)).map(ident).join(', ')}`);
    },
    async cleanup(swapped) {
      try {
        if (!swapped) await pool.query(`DROP TABLE IF EXISTS ${[...tableList(shadow), ...Object.values(stageNames(shadow))].map(ident).join(', ')}`).catch(() => undefined);
        if (lockClient) {
          await lockClient.query(`SELECT pg_advisory_unlock(hashtext($1))`, [PG_REPLAY_LOCK]).catch(() => undefined);
          lockClient.release();
        }
      } finally {
        if (!options.pool) await pool.end();
      }
    },
    errors: {
      newerLive: (version) => new ProjectionVersionMismatchError(`the live read models are version ${version}, newer than this replay's version ${PROJECTION_VERSION}`),
      verification: (diff, checksums) => new ReplayVerificationError(`replayed tables differ from the live ones at the same offsets: ${diff.join(', ')}`, checksums),
    },
  };
}

/**
 * One transaction's renames: live → old (when there are live tables), shadow → live.
 *
 * Every table's ACCESS EXCLUSIVE lock is taken first, all at once, never waiting while holding one:
 * renaming table by table would hold `jobs` while waiting for `job_log`, and a reader's join that
 * holds `job_log` and waits for `jobs` would deadlock with it (Postgres then aborts one of the two).
 */
async function swapTables(client: pg.ClientBase, shadow: TableSet, old: TableSet | undefined): Promise<void> {
  // An older version's live set may lack a table this version adds (http_cache before version 4).
  const { rows } = await client.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1::text[])`, [tableList(LIVE_TABLES)]);
  const live = new Set(old ? rows.map((r) => r.name) : []);
  await lockAll(client, [...tableList(LIVE_TABLES).filter((n) => live.has(n)), ...tableList(shadow)]);
  for (const k of TABLE_KEYS) {
    if (old && live.has(LIVE_TABLES[k])) await client.query(`ALTER TABLE ${ident(LIVE_TABLES[k])} RENAME TO ${ident(old[k])}`);
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

async function storeOffsets(client: pg.ClientBase, projection: string, positions: Positions): Promise<void> {
  const entries = [...positions].map(([k, v]) => ({ topic: k.slice(0, k.lastIndexOf(':')), partition: Number(k.slice(k.lastIndexOf(':') + 1)), next: String(v) }));
  await client.query(
    `INSERT INTO stream_offsets (projection, topic, partition, next_offset)
     SELECT $1, t, p, o FROM unnest($2::text[], $3::int[], $4::bigint[]) AS u(t, p, o)
     ON CONFLICT (projection, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
    [projection, entries.map((e) => e.topic), entries.map((e) => e.partition), entries.map((e) => e.next)],
  );
}
