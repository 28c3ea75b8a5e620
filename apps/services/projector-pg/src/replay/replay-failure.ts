/**
 * Why a replay stopped, said so that an operator can act on it. Postgres reports a row it refuses
 * in terms of the replay's own tables — `could not create unique index
 * "job_log__rmwvevmck_event_id_key"` — which names neither the event nor where it is. A refusal
 * raised while the shadow tables are built (a key that does not build, a duplicate on insert, a
 * check, a value its column type refuses) becomes a ReplayConstraintError that names the live table
 * and constraint, the key or column, and the events behind the row with their log positions:
 * found in the stage tables, whose rows carry the position of the event that made them, or in the
 * batch that was being applied.
 */
import type pg from 'pg';
import { ReplayConstraintError, type EventPlace } from '../errors.ts';
import { LOG_POSITION_COLUMNS } from '../model/event-identity.ts';
import type { PositionedEvent } from '../model/projectable-event.ts';
import { LIVE_TABLES, TABLE_KEYS, ident, stageNames, type StagedTables, type TableSet } from '../sql/tables.ts';
import type { ProjectedTopics } from '@trawl/streams';

/** A Postgres error as node-postgres hands it over (the fields a refusal carries). */
interface PgError {
  readonly code?: string;
  readonly message: string;
  readonly table?: string;
  readonly constraint?: string;
  readonly column?: string;
  readonly detail?: string;
  readonly where?: string;
}

/** Integrity constraint violations (23: unique, check, not null) and data exceptions (22: out of range, bad input). */
function isRefusal(err: unknown): err is PgError {
  const code = (err as PgError | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

export interface FailureContext {
  readonly db: Pick<pg.Pool, 'query'>;
  readonly shadow: TableSet;
  readonly topics: ProjectedTopics;
}

type TableKey = keyof TableSet;
const KEYS: readonly TableKey[] = TABLE_KEYS;
type StagedKey = keyof StagedTables;

/** Which table of the set a Postgres table name is (shadow, or its stage), if any. */
function tableOf(name: string | undefined, shadow: TableSet): TableKey | undefined {
  if (!name) return undefined;
  const stage = stageNames(shadow) as Partial<TableSet>;
  return KEYS.find((k) => shadow[k] === name || stage[k] === name);
}

/** The live constraint's name: Postgres derives it from the table's, so the shadow's prefix is swapped for the live table's. */
function liveConstraint(constraint: string | undefined, key: TableKey | undefined, shadow: TableSet): string | null {
  if (!constraint) return null;
  if (key && constraint.startsWith(shadow[key])) return LIVE_TABLES[key] + constraint.slice(shadow[key].length);
  return constraint;
}

/** `Key (job_id, fetch_id)=(a, b) is duplicated.` → { job_id: 'a', fetch_id: 'b' } (the raw values when they do not split cleanly). */
export function keyOf(detail: string | undefined): Record<string, string> {
  const m = /^Key \((.+?)\)=\((.*)\) (?:is duplicated|already exists)/s.exec(detail ?? '');
  if (!m) return {};
  const columns = m[1]!.split(', ');
  if (columns.length === 1) return { [columns[0]!]: m[2]! };
  const values = m[2]!.split(', ');
  if (values.length !== columns.length) return { [columns.join(', ')]: m[2]! };
  return Object.fromEntries(columns.map((c, i) => [c, values[i]!]));
}

const JOB_EVENTS = new Set(['CrawlRequested', 'JobDispatched', 'JobCompleted', 'JobFailed', 'JobCancelled']);

function topicOf(event: string, topics: ProjectedTopics): string {
  if (JOB_EVENTS.has(event)) return topics.jobs;
  return event === 'ItemExtracted' ? topics.items : topics.pages;
}

/** What a stage table's row says of its event: name, id, time. */
const STAGE_EVENT: Readonly<Record<StagedKey, string>> = {
  pages: `CASE WHEN ok THEN 'PageFetched' ELSE 'PageFailed' END AS event, event_id, fetched_at AS occurred_at`,
  items: `'ItemExtracted' AS event, event_id, extracted_at AS occurred_at`,
  log: `event, event_id, ts AS occurred_at`,
};

/** The events behind a key, from the stage table (positions included); none when the stage is gone or holds no such column. */
async function stagedEvents(ctx: FailureContext, key: TableKey, values: Record<string, string>): Promise<EventPlace[]> {
  if (key === 'jobs' || key === 'cache' || Object.keys(values).length === 0) return [];
  const stage = stageNames(ctx.shadow)[key];
  const columns = Object.keys(values);
  const where = columns.map((c, i) => `${ident(c)}::text = $${i + 1}`).join(' AND ');
  const [partition, offset] = LOG_POSITION_COLUMNS;
  try {
    const { rows } = await ctx.db.query<{ event: string; event_id: string; occurred_at: Date; p: number; o: string }>(
      `SELECT ${STAGE_EVENT[key]}, ${ident(partition)} AS p, ${ident(offset)}::text AS o FROM ${ident(stage)} WHERE ${where} ORDER BY 4, 5 LIMIT 10`,
      columns.map((c) => values[c]),
    );
    return rows.map((r) => ({ topic: topicOf(r.event, ctx.topics), partition: r.p, offset: r.o, event: r.event, event_id: r.event_id, occurred_at: r.occurred_at.toISOString() }));
  } catch {
    return []; // the stage is gone, or the key has a column it does not hold (seq): the key alone must do
  }
}

/** The events of a batch that make a row with this key. */
function batchEvents(batch: readonly (PositionedEvent & { readonly topic: string })[], key: TableKey, values: Record<string, string>): EventPlace[] {
  const matches = (v: Record<string, unknown>) => Object.entries(values).every(([c, x]) => c in v && String(v[c]) === x);
  return batch
    .filter((e) => {
      const v = e.value as unknown as Record<string, unknown>;
      if (key === 'pages') return (e.name === 'PageFetched' || e.name === 'PageFailed') && matches(v);
      if (key === 'items') return e.name === 'ItemExtracted' && matches(v);
      if (key === 'log') return e.name !== 'ItemExtracted' && matches(v);
      // A cache row is keyed by user and URL; a page event carries the URL (its user is its job's).
      if (key === 'cache') return e.name === 'PageFetched' && String(v.url) === values.url;
      return matches(v);
    })
    .slice(0, 10)
    .map((e) => ({ topic: e.topic, partition: e.partition, offset: String(e.offset), event: e.name, event_id: e.value.event_id, occurred_at: e.value.occurred_at.toISOString() }));
}

const place = (e: EventPlace) => `${e.event} ${e.event_id} at ${e.topic} partition ${e.partition} offset ${e.offset} (occurred ${e.occurred_at})`;

function describe(key: TableKey | undefined, err: PgError, constraint: string | null, values: Record<string, string>, events: readonly EventPlace[]): string {
  const table = key ? LIVE_TABLES[key] : (err.table ?? 'a read-model table');
  const keyText = Object.entries(values).map(([c, v]) => `${c} ${v}`).join(', ');
  const what = err.code === '23505'
    ? `more than one row of ${table} has ${keyText || 'the same key'}${constraint ? ` (constraint ${constraint})` : ''}`
    : `${table} refuses a row${constraint ? ` (constraint ${constraint})` : ''}${err.column ? ` (column ${err.column})` : ''}: ${err.message}`;
  const from = events.length === 0 ? '' : `; ${events.length === 1 ? 'the row comes from' : 'the rows come from'} ${events.map(place).join(', and ')}`;
  return `replay stopped: ${what}${from}. The live read models are untouched.`;
}

/**
 * The error to throw for `err`: a ReplayConstraintError when Postgres refused a row of the shadow
 * tables (with `batch`, the events being applied row by row when it happened), else `err` itself.
 */
export async function explainReplayFailure(err: unknown, ctx: FailureContext, batch?: readonly (PositionedEvent & { readonly topic: string })[]): Promise<unknown> {
  if (!isRefusal(err)) return err;
  const key = tableOf(err.table, ctx.shadow);
  const constraint = liveConstraint(err.constraint, key, ctx.shadow);
  const values = keyOf(err.detail);
  const events = batch ? (key ? batchEvents(batch, key, values) : []) : key ? await stagedEvents(ctx, key, values) : [];
  return new ReplayConstraintError(
    describe(key, err, constraint, values, events),
    { table: key ? LIVE_TABLES[key] : (err.table ?? ''), constraint, key: values, events },
    { cause: err },
  );
}

/** The event behind a stage row, with its place in the log. */
export interface StagedEvent {
  readonly partition: number;
  readonly offset: bigint;
  readonly event: string;
  readonly event_id: string;
  readonly occurred_at: Date;
}

/**
 * A row that COPY into a stage table refused (a value its column type does not take): Postgres
 * names the line, which is the row's index in what was copied, and the row knows its event.
 */
export function refusedStageRow(err: unknown, table: StagedKey, topics: ProjectedTopics, rows: { at(index: number): StagedEvent | undefined }): unknown {
  if (!isRefusal(err)) return err;
  const line = /\bline (\d+)\b/.exec(err.where ?? '');
  const row = line ? rows.at(Number(line[1]) - 1) : undefined;
  const events = row ? [{ topic: topicOf(row.event, topics), partition: row.partition, offset: String(row.offset), event: row.event, event_id: row.event_id, occurred_at: row.occurred_at.toISOString() }] : [];
  const column = /\bcolumn (\w+)/.exec(err.where ?? '')?.[1];
  return new ReplayConstraintError(
    describe(table, { ...err, column: err.column ?? column }, null, {}, events),
    { table: LIVE_TABLES[table], constraint: null, key: column ? { column } : {}, events },
    { cause: err },
  );
}
