/**
 * A throw-away ClickHouse database with the analytics facts tables (infra/clickhouse/sql, the
 * projector's own DDL), for tests and the bench. Writes go through plain HTTP: the console's
 * client is read-only by design.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { endpoints, httpTarget, repoRoot } from '@trawl/streams';

export interface ScratchClickHouse {
  readonly url: string;
  readonly database: string;
  exec(sql: string): Promise<string>;
  rows<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  drop(): Promise<void>;
}

/** CREATE TABLE statements of the projection's facts (001-facts.sql): the rollups are not read by the console. */
export function factsDdl(): string[] {
  const text = readFileSync(join(repoRoot, 'infra', 'clickhouse', 'sql', '001-facts.sql'), 'utf8');
  return text
    .split('\n')
    .map((l) => l.replace(/--.*$/, ''))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => /^CREATE TABLE/i.test(s));
}

export async function scratchClickHouse(label: string, url: string = endpoints().clickhouseUrl): Promise<ScratchClickHouse> {
  const database = `trawl_${label}_${randomBytes(4).toString('hex')}`;
  const send = async (sql: string, db: string | null = database): Promise<string> => {
    const target = httpTarget(url);
    const u = new URL(target.url);
    if (db) u.searchParams.set('database', db);
    const res = await fetch(u, { method: 'POST', body: sql, headers: target.authorization ? { authorization: target.authorization } : {}, signal: AbortSignal.timeout(120_000) });
    const text = await res.text();
    if (!res.ok) throw new Error(`ClickHouse: ${text.slice(0, 500)}`);
    return text;
  };
  await send(`CREATE DATABASE ${database}`, null);
  for (const ddl of factsDdl()) await send(ddl);
  return {
    url,
    database,
    exec: (sql) => send(sql),
    async rows<T>(sql: string) {
      const text = await send(`${sql}\nFORMAT JSONEachRow`);
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);
    },
    drop: async () => void (await send(`DROP DATABASE IF EXISTS ${database}`, null)),
  };
}
