/**
 * Pages/s of a local crawl through the whole pipeline: a frontier and N workers as processes on the
 * real stack, a generated site of P pages (no traps), from JobDispatched to JobCompleted.
 *
 *   npm run bench:crawl -w @trawl/e2e -- [--pages 5000] [--workers 2] [--links 10]
 *
 * Prints figures and one JSON line; writes bench-results/crawl.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createTestSite } from '@trawl/demo-site';
import { readEvents, repoRoot } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import type { JobCompleted } from '@trawl/schemas';
import { Pipeline } from '../src/pipeline.ts';

const { values } = parseArgs({
  options: { pages: { type: 'string', default: '5000' }, workers: { type: 'string', default: '2' }, links: { type: 'string', default: '10' } },
});
const pages = Number(values.pages);
const workers = Number(values.workers);
const links = Number(values.links);

const site = await createTestSite({ pages, linksPerPage: links, itemsPerPage: 2, traps: false });
const pipeline = await Pipeline.start();
try {
  pipeline.spawn('frontier');
  for (let i = 0; i < workers; i++) pipeline.spawn('worker');
  // Let the children join their groups before the clock starts.
  await new Promise((r) => setTimeout(r, 8_000));
  const jobId = randomUUID();
  const started = performance.now();
  await pipeline.producer.emit(
    'JobDispatched',
    {
      job_id: jobId, user_id: 'bench', target_id: null, schedule_id: null, search_url: site.home, start_urls: [site.home],
      keywords: [], location: null, spec: { ...crawlSpec(null, { depth: 100, max_pages: pages * 2 }), ...site.spec }, attempt: 1, params: {},
    },
    { topic: pipeline.topics.jobs },
  );
  let lastReport = 0;
  let completed: JobCompleted | undefined;
  while (!completed) {
    await new Promise((r) => setTimeout(r, 1_000));
    const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.jobs]);
    completed = events.find((e) => e.event.name === 'JobCompleted')?.event.value as JobCompleted | undefined;
    const served = site.accessLog.entries().length;
    if (performance.now() - lastReport > 5_000) {
      lastReport = performance.now();
      process.stderr.write(`  ${served} requests served after ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    }
    if (performance.now() - started > 15 * 60_000) throw new Error('crawl did not complete in 15 minutes');
  }
  const seconds = (Date.now() - (completed.started_at.getTime())) / 1000;
  const wall = (performance.now() - started) / 1000;
  const result = {
    benchmark: 'crawl-throughput',
    pages: completed.pages_fetched,
    failed: completed.pages_failed,
    items: completed.items_extracted,
    workers,
    wall_seconds: Number(wall.toFixed(2)),
    job_seconds: Number(seconds.toFixed(2)),
    pages_per_second: Number((completed.pages_fetched / wall).toFixed(1)),
    requests_served: site.accessLog.entries().length,
  };
  process.stdout.write(`crawl of ${result.pages} pages with ${workers} workers: ${result.wall_seconds} s, ${result.pages_per_second} pages/s\n`);
  process.stdout.write(JSON.stringify(result) + '\n');
  const out = join(repoRoot, 'bench-results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'crawl.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  await pipeline.stop();
  await site.close();
}
