/**
 * The listing of two large runs on the real Postgres, over projector-pg's own read-model tables:
 * it reads them in bounded batches (no statement answers more than a batch, however large the
 * runs), counts every change, lists the first of each kind, and agrees with the pure rules applied
 * to the whole runs. The figures of memory against run size: bench/changes-memory.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { setupReadModels } from '@trawl/projector-pg';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { compareItems, comparePages, jobChanges, type Connect, type RunItem, type RunPage } from '../src/index.ts';
import { seedLargeRuns, type LargeRuns } from './large-runs.ts';

const PAGES = 3_000;
const ITEMS_PER_PAGE = 5;
/** The largest batch the listing reads (read-model.ts: pages 2,000, items 2,000 at most). */
const MAX_BATCH = 2_000;

let db: TestDatabase;
let runs: LargeRuns;
beforeAll(async () => {
  db = await createTestDatabase('trawl_changes_large');
  await setupReadModels(db.pool);
  runs = await seedLargeRuns(db.pool, { pages: PAGES, shift: 150, itemsPerPage: ITEMS_PER_PAGE });
  await db.pool.query('ANALYZE job_pages; ANALYZE job_items');
}, 180_000);
afterAll(async () => db?.drop());

/** The pool, with the number of rows of every answer recorded, whether asked of the pool or of a client of it. */
function counting(pool: pg.Pool): { pool: Connect & Pick<pg.Pool, 'query'>; answers: number[] } {
  const answers: number[] = [];
  const record = <T>(result: T): T => {
    const rows = (result as { rows?: unknown[] } | undefined)?.rows;
    if (rows) answers.push(rows.length);
    return result;
  };
  const wrapped = {
    query: (async (...args: Parameters<pg.Pool['query']>) => record(await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args))) as pg.Pool['query'],
    connect: (async () => {
      const client = await pool.connect();
      const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
      return Object.assign(client, { query: async (...args: unknown[]) => record(await query(...args)) });
    }) as pg.Pool['connect'],
  };
  return { pool: wrapped, answers };
}

describe('the listing of large runs', () => {
  it(`reads two runs of ${PAGES} pages and ${PAGES * ITEMS_PER_PAGE} items in bounded batches and counts every change`, async () => {
    const { pool, answers } = counting(db.pool);
    const answer = await jobChanges(pool, runs.current, { limit: 100 });
    expect(answer.kind).toBe('changes');
    if (answer.kind !== 'changes') return;
    const c = answer.changes;
    expect(c.previous_job_id).toBe(runs.previous);
    expect(c.pages.counts).toEqual(runs.expected.pages);
    const { unchanged, ...itemCounts } = runs.expected.items;
    expect(c.items.counts).toEqual(itemCounts);
    expect(c.items_unchanged).toBe(unchanged);
    expect(c.truncated).toBe(true);
    for (const list of [...Object.values(c.pages.lists), ...Object.values(c.items.lists)]) expect(list.length).toBeLessThanOrEqual(100);
    // The memory bound: no answer of Postgres held more than a batch, however many rows the runs have.
    expect(Math.max(...answers)).toBeLessThanOrEqual(MAX_BATCH);
    expect(answers.length).toBeGreaterThan(2 * PAGES / MAX_BATCH);
  });

  it('lists the first entries of each kind that the pure rules give for the whole runs', async () => {
    const [pagesBefore, pagesNow, itemsBefore, itemsNow] = await Promise.all([
      db.pool.query<RunPage>('SELECT fetch_id, url, ok, content_hash FROM job_pages WHERE job_id = $1', [runs.previous]),
      db.pool.query<RunPage>('SELECT fetch_id, url, ok, content_hash FROM job_pages WHERE job_id = $1', [runs.current]),
      db.pool.query<RunItem>('SELECT item_key, url, fields FROM job_items WHERE job_id = $1', [runs.previous]),
      db.pool.query<RunItem>('SELECT item_key, url, fields FROM job_items WHERE job_id = $1', [runs.current]),
    ]);
    const pages = comparePages(pagesBefore.rows, pagesNow.rows);
    const items = compareItems(itemsBefore.rows, itemsNow.rows);
    const answer = await jobChanges(db.pool, runs.current, { limit: 40 });
    if (answer.kind !== 'changes') throw new Error(answer.kind);
    const c = answer.changes;
    for (const kind of ['new', 'changed', 'gone', 'unchanged', 'unknown'] as const) {
      const all = pages.filter((p) => p.kind === kind);
      expect(c.pages.counts[kind]).toBe(all.length);
      expect(c.pages.lists[kind]).toEqual(all.slice(0, 40));
    }
    for (const kind of ['new', 'changed', 'removed'] as const) {
      const all = items.changes.filter((i) => i.kind === kind);
      expect(c.items.counts[kind]).toBe(all.length);
      expect(c.items.lists[kind]).toEqual(all.slice(0, 40));
    }
    expect(c.items_unchanged).toBe(items.unchanged);
  });

  it('cuts the lists at their bytes, keeping each a prefix', async () => {
    const answer = await jobChanges(db.pool, runs.current, { limit: 10_000, maxListBytes: 20_000 });
    if (answer.kind !== 'changes') throw new Error(answer.kind);
    const c = answer.changes;
    expect(c.pages.counts.unchanged).toBe(runs.expected.pages.unchanged);
    expect(c.pages.lists.unchanged.length).toBeGreaterThan(10);
    expect(c.pages.lists.unchanged.length).toBeLessThan(200);
    expect(JSON.stringify(c.pages.lists.unchanged).length).toBeLessThanOrEqual(20_000);
    expect(JSON.stringify(c.items.lists.new).length).toBeLessThanOrEqual(20_000);
    expect(c.truncated).toBe(true);
  });

  it('the first run of the schedule lists everything as new, counted whole', async () => {
    const answer = await jobChanges(db.pool, runs.previous, { limit: 10 });
    if (answer.kind !== 'changes') throw new Error(answer.kind);
    const c = answer.changes;
    expect(c.previous_job_id).toBeNull();
    expect(c.pages.counts).toEqual({ new: PAGES, changed: 0, gone: 0, unchanged: 0, unknown: 0 });
    expect(c.items.counts).toEqual({ new: PAGES * ITEMS_PER_PAGE, changed: 0, removed: 0 });
    expect(c.items.lists.new.map((i) => i.index)).toEqual([0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
  });
});
