/**
 * The dead-letter projection: both dead-letter topics into `dead_letters`, exactly once in effect
 * (streams' runRawProjection: the rows and the offsets in one transaction), so the API and the
 * console read keyset pages of one user's dead letters and never a topic.
 *
 * It runs in projector-pg's process, beside the job read models, because it needs them: a dead
 * letter belongs to the user of the job its value names, and that user is in `jobs` (or, for a job
 * the API accepted moments ago, in the API's `api_jobs`), both in this database. It is a projection
 * of its own — own name, group and offsets — because its topics and its life differ: raw messages,
 * often undecodable, kept for ever, rebuilt on their own.
 *
 * A dead letter can be projected before its job is (two topics, two projections): it is stored
 * with no owner, and adopted by its job's user once `jobs` has the job (`adoptOrphans`, every
 * `adoptEveryMs` and at start). Undecodable ones name no job and stay unowned: shown to nobody,
 * readable by operators in SQL.
 */
import type pg from 'pg';
import {
  EventCodec,
  runRawProjection,
  TOPICS,
  UndecodableMessageError,
  isRetriable,
  type Logger,
  type MetricsRegistry,
  type ProjectedMessage,
  type Projection,
  type createKafka,
} from '@trawl/streams';
import { createPool } from '@trawl/store';
import { deadLetterRow, type DeadLetterRow, type DeadLetterSource, type DecodedValue } from './dead-letter-row.ts';
import { deadLetterProjectionName, setupDeadLetters } from './dead-letter-ddl.ts';

type Kafka = ReturnType<typeof createKafka>;

export interface DeadLetterTopics {
  readonly fetch: string;
  readonly events: string;
}

export const DEFAULT_DEAD_LETTER_TOPICS: DeadLetterTopics = { fetch: TOPICS.fetchDlq, events: TOPICS.eventsDlq };

export interface DeadLetterProjectorOptions {
  readonly pool?: pg.Pool;
  readonly kafka?: Kafka;
  readonly codec?: EventCodec;
  readonly logger?: Logger;
  readonly topics?: DeadLetterTopics;
  readonly groupId?: string;
  readonly metrics?: MetricsRegistry;
  readonly statsLogIntervalMs?: number;
  /** How often unowned dead letters look for their job's user. Default 5 s. */
  readonly adoptEveryMs?: number;
  /** How long start waits for Postgres. Default 10 minutes. */
  readonly startTimeoutMs?: number;
}

const COLUMNS = [
  ['id', 'text'], ['source', 'text'], ['topic', 'text'], ['partition', 'int'], ['"offset"', 'bigint'], ['user_id', 'text'],
  ['job_id', 'text'], ['event', 'text'], ['url', 'text'], ['reason', 'text'], ['error_class', 'text'], ['error_code', 'text'],
  ['error_message', 'text'], ['attempts', 'int'], ['failed_at', 'timestamptz'], ['origin_topic', 'text'], ['origin_partition', 'int'],
  ['origin_offset', 'bigint'], ['key', 'bytea'], ['value', 'bytea'], ['headers', 'jsonb'],
] as const;

function values(row: DeadLetterRow, userId: string | null): unknown[] {
  return [
    row.id, row.source, row.topic, row.partition, row.offset, userId, row.job_id, row.event, row.url, row.reason, row.error_class,
    row.error_code, row.error_message, row.attempts, row.failed_at, row.origin_topic, row.origin_partition, row.origin_offset,
    row.key, row.value, JSON.stringify(row.headers),
  ];
}

async function tableExists(db: Pick<pg.ClientBase, 'query'>, table: string): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [table]);
  return rows[0]!.present;
}

/** The users of these jobs, from the read model and the API's record of the jobs it accepted. */
async function ownersOf(db: Pick<pg.ClientBase, 'query'>, jobIds: readonly string[]): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  if (jobIds.length === 0) return owners;
  for (const table of ['api_jobs', 'jobs']) {
    if (!(await tableExists(db, table))) continue;
    const { rows } = await db.query<{ job_id: string; user_id: string }>(
      `SELECT job_id::text AS job_id, user_id FROM ${table} WHERE job_id::text = ANY($1::text[]) AND user_id IS NOT NULL`,
      [jobIds],
    );
    for (const r of rows) owners.set(r.job_id, r.user_id);
  }
  return owners;
}

/** Gives unowned dead letters the user of their job, where the job is now known. Returns how many. */
export async function adoptOrphans(db: Pick<pg.ClientBase, 'query'>): Promise<number> {
  let adopted = 0;
  for (const table of ['jobs', 'api_jobs']) {
    if (!(await tableExists(db, table))) continue;
    const { rowCount } = await db.query(
      `UPDATE dead_letters AS d SET user_id = j.user_id FROM ${table} AS j
       WHERE d.user_id IS NULL AND d.job_id IS NOT NULL AND j.job_id::text = d.job_id AND j.user_id IS NOT NULL`,
    );
    adopted += rowCount ?? 0;
  }
  return adopted;
}

export async function startDeadLetterProjector(options: DeadLetterProjectorOptions = {}): Promise<Projection> {
  const topics = options.topics ?? DEFAULT_DEAD_LETTER_TOPICS;
  const sourceOf = new Map<string, DeadLetterSource>([[topics.fetch, 'fetch'], [topics.events, 'events']]);
  const codec = options.codec ?? new EventCodec();
  const ownsPool = !options.pool;
  const pool = options.pool ?? createPool({ applicationName: 'trawl-projector-dead-letters', max: 4 });

  async function decode(m: ProjectedMessage): Promise<DecodedValue | undefined> {
    try {
      const e = await codec.decode(m.value);
      return { name: e.name, value: e.value as unknown as Record<string, unknown> };
    } catch (err) {
      // A registry outage says nothing about the message: the batch is tried again.
      if (!(err instanceof UndecodableMessageError) && isRetriable(err)) throw err;
      return undefined;
    }
  }

  const projection = await runRawProjection({
    name: deadLetterProjectionName(),
    topics: [topics.fetch, topics.events],
    pool,
    ...(options.kafka ? { kafka: options.kafka } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.groupId ? { groupId: options.groupId } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.statsLogIntervalMs !== undefined ? { statsLogIntervalMs: options.statsLogIntervalMs } : {}),
    startTimeoutMs: options.startTimeoutMs ?? 10 * 60_000,
    setup: async (db) => {
      await setupDeadLetters(db);
    },
    apply: async (messages, tx) => {
      const rows: DeadLetterRow[] = [];
      for (const m of messages) rows.push(deadLetterRow(sourceOf.get(m.topic)!, m, await decode(m)));
      const owners = await ownersOf(tx, [...new Set(rows.flatMap((r) => (r.job_id ? [r.job_id] : [])))]);
      const columns = COLUMNS.map(() => [] as unknown[]);
      for (const row of rows) values(row, row.job_id ? (owners.get(row.job_id) ?? null) : null).forEach((v, i) => columns[i]!.push(v));
      await tx.query(
        `INSERT INTO dead_letters (${COLUMNS.map(([c]) => c).join(', ')})
         SELECT * FROM unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})
         ON CONFLICT DO NOTHING`,
        columns,
      );
    },
  });

  const logger = options.logger;
  let adopting: Promise<unknown> = Promise.resolve();
  const adopt = () => {
    adopting = adoptOrphans(pool)
      .then((n) => {
        if (n > 0) logger?.info({ adopted: n }, 'dead letters adopted by their jobs\' users');
      })
      .catch((err: unknown) => logger?.warn({ err }, 'could not adopt unowned dead letters; trying again later'));
  };
  adopt();
  const timer = setInterval(adopt, options.adoptEveryMs ?? 5_000);
  timer.unref();

  return {
    name: projection.name,
    groupId: projection.groupId,
    ready: projection.ready,
    stats: () => projection.stats(),
    async stop() {
      clearInterval(timer);
      await projection.stop();
      await adopting;
      if (ownsPool) await pool.end();
    },
  };
}
