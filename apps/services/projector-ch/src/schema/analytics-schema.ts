/**
 * The analytics DDL lives in infra/clickhouse/sql/*.sql (valid on 18.16 and current releases);
 * this module reads it, splits it into statements, and applies it to a database: the live one at
 * start-up, or a replay's shadow database.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@trawl/streams';
import { type ClickHouse, ident, quote, uint } from '@trawl/clickhouse';
import { PROJECTION_VERSION } from '../version.ts';
import { ProjectionVersionMismatchError } from '../errors.ts';

export const SQL_DIR = join(repoRoot, 'infra', 'clickhouse', 'sql');

/** Statements of one file: `--` comments dropped, split at `;` ending a line. */
export function splitStatements(text: string): string[] {
  const withoutComments = text
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n');
  return withoutComments
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface SchemaFile {
  readonly name: string;
  readonly statements: readonly string[];
}

export function schemaFiles(dir: string = SQL_DIR): SchemaFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((name) => ({ name, statements: splitStatements(readFileSync(join(dir, name), 'utf8')) }));
}

/** The materialised views (dropped and re-created around a swap). */
export function viewStatements(dir: string = SQL_DIR): { name: string; sql: string }[] {
  return schemaFiles(dir)
    .flatMap((f) => f.statements)
    .map((sql) => ({ sql, m: /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)/i.exec(sql) }))
    .filter((x): x is { sql: string; m: RegExpExecArray } => x.m !== null)
    .map(({ sql, m }) => ({ name: m[1]!, sql }));
}

/** Tables (not views) the schema creates, in creation order. */
export function tableNames(dir: string = SQL_DIR): string[] {
  return schemaFiles(dir)
    .flatMap((f) => f.statements)
    .map((sql) => /^CREATE TABLE IF NOT EXISTS (\w+)/i.exec(sql)?.[1])
    .filter((n): n is string => n !== undefined);
}

export async function createDatabase(ch: ClickHouse, database: string): Promise<void> {
  await ch.exec(`CREATE DATABASE IF NOT EXISTS ${ident(database)}`, { database: null });
}

/** Creates what is missing of the schema in `ch`'s database (idempotent). */
export async function applySchema(ch: ClickHouse, options: { views?: boolean } = {}): Promise<void> {
  await createDatabase(ch, ch.database);
  for (const file of schemaFiles()) {
    for (const sql of file.statements) {
      if (options.views === false && /^CREATE MATERIALIZED VIEW/i.test(sql)) continue;
      await ch.exec(sql);
    }
  }
}

export async function databaseExists(ch: ClickHouse, database: string): Promise<boolean> {
  const rows = await ch.rows<{ n: string }>(`SELECT count() AS n FROM system.databases WHERE name = ${quote(database)}`);
  return Number(rows[0]?.n ?? 0) > 0;
}

/** The version recorded in a database's projection_info, or undefined when it has none. */
export async function storedVersion(ch: ClickHouse, database: string = ch.database): Promise<number | undefined> {
  const has = await ch.rows<{ n: string }>(`SELECT count() AS n FROM system.tables WHERE database = ${quote(database)} AND name = 'projection_info'`);
  if (Number(has[0]?.n ?? 0) === 0) return undefined;
  const rows = await ch.rows<{ v: number | string; n: string }>(`SELECT max(version) AS v, count() AS n FROM ${ident(database)}.projection_info`);
  return Number(rows[0]?.n ?? 0) === 0 ? undefined : Number(rows[0]!.v);
}

export async function recordVersion(ch: ClickHouse, builtBy: string, version: number = PROJECTION_VERSION): Promise<void> {
  await ch.exec(`INSERT INTO projection_info (version, built_by, built_at) VALUES (${uint(version)}, ${quote(builtBy)}, now())`);
}

/**
 * Brings the live database to this version's schema: created when there is none, left alone when
 * it is this version, refused when another version built it (a replay rolls versions out).
 */
export async function setupAnalytics(ch: ClickHouse, version: number = PROJECTION_VERSION): Promise<{ created: boolean }> {
  await createDatabase(ch, ch.database);
  const current = await storedVersion(ch);
  if (current !== undefined && current !== version) {
    throw new ProjectionVersionMismatchError(
      current > version
        ? `the analytics tables are version ${current}, newer than this projector (version ${version})`
        : `the analytics tables are version ${current}, this projector builds version ${version}: run \`trawl replay ch\``,
    );
  }
  await applySchema(ch);
  if (current === undefined) await recordVersion(ch, 'setup', version);
  return { created: current === undefined };
}
