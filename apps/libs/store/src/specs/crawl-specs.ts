/**
 * Crawl specs by content hash (crawl_specs). A FetchRequested names its job's spec by hash instead of
 * copying it: the frontier writes the spec here before it produces the first request that names it,
 * and workers read it by hash (and cache it: a hash's spec never changes). Rows are small in number
 * (one per distinct spec, not per job) and never updated.
 */
import type { CrawlSpec } from '@trawl/schemas';
import type pg from 'pg';
import type { Migration } from '../migrate.ts';

/** The migration owner: the frontier (which writes) and the worker (which reads) both apply it. */
export const CRAWL_SPECS_OWNER = 'crawl-specs';

export const CRAWL_SPEC_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'crawl specs by content hash',
    sql: `
      CREATE TABLE IF NOT EXISTS crawl_specs (
        hash text PRIMARY KEY,
        spec jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];

type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/** Stores the specs under their hashes; a hash already stored is left as it is (its spec is the same). */
export async function saveCrawlSpecs(db: Queryable, specs: ReadonlyMap<string, CrawlSpec>): Promise<void> {
  if (specs.size === 0) return;
  await db.query(
    `INSERT INTO crawl_specs (hash, spec)
     SELECT * FROM unnest($1::text[], $2::jsonb[])
     ON CONFLICT (hash) DO NOTHING`,
    [[...specs.keys()], [...specs.values()].map((s) => JSON.stringify(s))],
  );
}

/** The spec stored under `hash`, or null when there is none. */
export async function loadCrawlSpec(db: Queryable, hash: string): Promise<CrawlSpec | null> {
  const { rows } = await db.query<{ spec: CrawlSpec }>('SELECT spec FROM crawl_specs WHERE hash = $1', [hash]);
  return rows[0]?.spec ?? null;
}
