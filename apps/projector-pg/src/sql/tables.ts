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
}

export const LIVE_TABLES: TableSet = { jobs: 'jobs', pages: 'job_pages', items: 'job_items', log: 'job_log' };

const SUFFIX = /^[a-z0-9_]{1,24}$/;

export function suffixedTables(suffix: string, base: TableSet = LIVE_TABLES): TableSet {
  if (!SUFFIX.test(suffix)) throw new Error(`table suffix must match ${SUFFIX}, got "${suffix}"`);
  return { jobs: `${base.jobs}__${suffix}`, pages: `${base.pages}__${suffix}`, items: `${base.items}__${suffix}`, log: `${base.log}__${suffix}` };
}

export function tableList(t: TableSet): string[] {
  return [t.jobs, t.pages, t.items, t.log];
}

/** Table names here come from code (LIVE_TABLES, a checked suffix), never from input; quoted anyway. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
