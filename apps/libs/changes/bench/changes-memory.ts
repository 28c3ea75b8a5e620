/**
 * What `GET /jobs/:id/changes` costs the API process as a run grows: two runs of a schedule of N
 * pages (10 items each) are seeded into a throw-away database, and each is listed in a process of
 * its own (so its peak RSS is its own) with the API's default limits. Prints a table and JSON.
 *
 *   npm run bench -w @trawl/changes [-- pages…]     (default 2000 10000 40000; TRAWL_BENCH_HEAP_MB caps the heap)
 *
 * Figures: `peak heap` is the largest `heapUsed` sampled every 5 ms above the heap before the
 * call; `max RSS` the process's peak resident size (getrusage), both in MiB.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setupReadModels } from '@trawl/projector-pg';
import { createPool } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { jobChanges } from '../src/index.ts';
import { seedLargeRuns } from '../test/large-runs.ts';

const ITEMS_PER_PAGE = 10;
const MiB = 1024 * 1024;

interface Measure {
  readonly pages: number;
  readonly items: number;
  readonly ms: number;
  readonly peakHeapMiB: number;
  readonly maxRssMiB: number;
  readonly counted: { readonly pages: number; readonly items: number };
}

async function measure(url: string, jobId: string, pages: number): Promise<Measure> {
  const pool = createPool({ connectionString: url, max: 2 });
  await pool.query('SELECT 1');
  globalThis.gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
  const started = performance.now();
  const answer = await jobChanges(pool, jobId);
  const ms = performance.now() - started;
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  clearInterval(sampler);
  await pool.end();
  if (answer.kind !== 'changes') throw new Error(`no changes for ${jobId}: ${answer.kind}`);
  const c = answer.changes;
  const sum = (o: Readonly<Record<string, number>>) => Object.values(o).reduce((a, b) => a + b, 0);
  return {
    pages,
    items: pages * ITEMS_PER_PAGE,
    ms: Math.round(ms),
    peakHeapMiB: Math.round(((peak - base) / MiB) * 10) / 10,
    maxRssMiB: Math.round((process.resourceUsage().maxRSS * 1024) / MiB),
    counted: { pages: sum(c.pages.counts), items: sum(c.items.counts) + c.items_unchanged },
  };
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === '--child') {
    const [url, jobId, pages] = args;
    process.stdout.write(JSON.stringify(await measure(url!, jobId!, Number(pages))));
    return;
  }
  const sizes = (mode === undefined ? [] : [mode, ...args]).map(Number);
  // TRAWL_BENCH_HEAP_MB caps the measuring process's old space: a listing that holds a run whole dies there.
  const heapCap = process.env.TRAWL_BENCH_HEAP_MB ? [`--max-old-space-size=${process.env.TRAWL_BENCH_HEAP_MB}`] : [];
  const db = await createTestDatabase('trawl_changes_bench');
  try {
    await setupReadModels(db.pool);
    const results: Measure[] = [];
    for (const pages of sizes.length > 0 ? sizes : [2_000, 10_000, 40_000]) {
      const runs = await seedLargeRuns(db.pool, { pages, shift: Math.max(1, Math.floor(pages / 20)), itemsPerPage: ITEMS_PER_PAGE });
      await db.pool.query('ANALYZE job_pages; ANALYZE job_items');
      const child = spawnSync(process.execPath, ['--expose-gc', ...heapCap, '--import', 'tsx', fileURLToPath(import.meta.url), '--child', db.url, runs.current, String(pages)], { encoding: 'utf8' });
      if (child.status !== 0) throw new Error(`the measuring process failed: ${child.stderr}`);
      results.push(JSON.parse(child.stdout) as Measure);
    }
    console.log('pages/run  items/run  ms      peak heap MiB  max RSS MiB');
    for (const r of results) console.log(`${String(r.pages).padEnd(11)}${String(r.items).padEnd(11)}${String(r.ms).padEnd(8)}${String(r.peakHeapMiB).padEnd(15)}${r.maxRssMiB}`);
    console.log(JSON.stringify({ bench: 'changes-memory', items_per_page: ITEMS_PER_PAGE, results }));
  } finally {
    await db.drop();
  }
}

await main();
