/**
 * The dashboard SQL lives in infra/clickhouse/dashboards/*.sql, documented for people and
 * generated into the Grafana dashboard; the console runs those very files, so the SQL a reader
 * sees is the SQL behind the charts. This module reads them and their `-- @key value` headers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@trawl/streams';

export const DASHBOARDS_DIR = join(repoRoot, 'infra', 'clickhouse', 'dashboards');

export type QueryShape = 'series' | 'series-by' | 'table';

export interface DashboardQuery {
  /** File name without `.sql`. */
  readonly file: string;
  readonly name: string;
  readonly shape: QueryShape;
  readonly title: string;
  readonly unit: string | undefined;
  /** `series` files: their value columns, after `t` (for Grafana, which needs them named). */
  readonly series: readonly string[];
  /** The first comment lines: what the query shows and why. */
  readonly description: string;
  /** The statement as written, placeholders included, header comments removed. */
  readonly template: string;
}

const SHAPES: readonly QueryShape[] = ['series', 'series-by', 'table'];

export function parseDashboardQuery(file: string, text: string): DashboardQuery {
  const headers = new Map<string, string>();
  const description: string[] = [];
  const body: string[] = [];
  for (const line of text.split('\n')) {
    const header = /^--\s*@(\w+)\s+(.*)$/.exec(line);
    if (header) headers.set(header[1]!, header[2]!.trim());
    else if (body.length === 0 && line.startsWith('--')) description.push(line.replace(/^--\s?/, ''));
    else body.push(line);
  }
  const name = headers.get('name');
  const shape = headers.get('shape') as QueryShape | undefined;
  if (!name || !/^[a-z_]+$/.test(name)) throw new Error(`${file}: missing or malformed "-- @name"`);
  if (!shape || !SHAPES.includes(shape)) throw new Error(`${file}: "-- @shape" must be one of ${SHAPES.join(', ')}`);
  if (shape === 'series' && !headers.get('series')) throw new Error(`${file}: a series query lists its value columns in "-- @series"`);
  return {
    file,
    name,
    shape,
    title: headers.get('title') ?? name,
    unit: headers.get('unit'),
    series: (headers.get('series') ?? '').split(',').map((c) => c.trim()).filter(Boolean),
    description: description.join(' ').trim(),
    template: body.join('\n').trim().replace(/;\s*$/, ''),
  };
}

/** A panel file declares itself with `-- @name`; other .sql files there are reference queries for people. */
export function isPanelFile(text: string): boolean {
  return /^--\s*@name\s/m.test(text);
}

export function loadDashboardQueries(dir: string = DASHBOARDS_DIR): ReadonlyMap<string, DashboardQuery> {
  const out = new Map<string, DashboardQuery>();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.sql')).sort()) {
    const text = readFileSync(join(dir, f), 'utf8');
    if (!isPanelFile(text)) continue;
    const q = parseDashboardQuery(f.replace(/\.sql$/, ''), text);
    if (out.has(q.name)) throw new Error(`${f}: query name "${q.name}" is used twice`);
    out.set(q.name, q);
  }
  return out;
}
