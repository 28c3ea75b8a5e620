/**
 * The names of one set of read-model tables. The live set has the names the API reads; a replay
 * builds a shadow set under a unique suffix and renames it into place. Index and constraint
 * names derive from the table names at creation, so a unique suffix keeps them from clashing
 * with those of tables swapped in by earlier replays.
 */
export interface TableSet {
  readonly jobs: string;
  readonly pages: string;
  readonly items: string;
  readonly log: string;
  /** The HTTP cache: per user and URL, the page later crawls may reuse (model/cache-row.ts). */
  readonly cache: string;
}

export const LIVE_TABLES: TableSet = { jobs: 'jobs', pages: 'job_pages', items: 'job_items', log: 'job_log', cache: 'http_cache' };

/** The tables of a set, by key, in the order they are created, swapped and checked. */
export const TABLE_KEYS = ['jobs', 'pages', 'items', 'log', 'cache'] as const satisfies readonly (keyof TableSet)[];

const SUFFIX = /^[a-z0-9_]{1,24}$/;

export function suffixedTables(suffix: string, base: TableSet = LIVE_TABLES): TableSet {
  if (!SUFFIX.test(suffix)) throw new Error(`table suffix must match ${SUFFIX}, got "${suffix}"`);
  return Object.fromEntries(TABLE_KEYS.map((k) => [k, `${base[k]}__${suffix}`])) as unknown as TableSet;
}

export function tableList(t: TableSet): string[] {
  return TABLE_KEYS.map((k) => t[k]);
}

/** The tables a replay loads through a stage: page, item and log rows (job rows fold in memory, cache rows settle from pages). */
export type StagedTables = Pick<TableSet, 'pages' | 'items' | 'log'>;

/** The stage tables of a shadow set (`<shadow table>_stage`), unindexed, where the bulk build appends rows. */
export function stageNames(t: TableSet): StagedTables {
  return { pages: `${t.pages}_stage`, items: `${t.items}_stage`, log: `${t.log}_stage` };
}

/** Table names here come from code (LIVE_TABLES, a checked suffix), never from input; quoted anyway. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
