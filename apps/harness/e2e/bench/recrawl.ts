/**
 * What the HTTP cache buys on a recrawl: a frontier, N workers and projector-pg as processes on the
 * real stack (Kafka, Postgres, S3) crawl a generated site of P pages (each padded to a real page's
 * size, with ETag and/or Last-Modified), then crawl the unchanged site again as the same user —
 * every page revalidated with a conditional request, answered 304, its stored body parsed again —
 * and once more with max_age (no request at all). Each crawl keeps its bodies for the cache
 * (`store_in_cache`), as a recurring schedule's runs do. Pages/s of each crawl, and the bytes the site
 * put on the wire (headers included), side by side. The issue's target for the recrawl: ≥ 5× the
 * first crawl's pages/s, ≥ 10× fewer bytes.
 *
 *   npm run bench:recrawl -w @trawl/e2e -- [--pages 5000] [--workers 2] [--links 10] [--page-bytes 16384]
 *                                           [--link-mbit 20 --link-delay-ms 5]
 *
 * `--link-mbit` puts the site behind a link of that bandwidth with `--link-delay-ms` each way
 * (shaped-link.ts): a site on the machine itself answers as fast as the crawler parses, so what a
 * 304 saves, the transfer, hardly shows; behind a real site's link it does.
 *
 * Prints a table and one JSON line; writes bench-results/recrawl.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import { readEvents, repoRoot } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import type { CrawlSpec, JobCompleted, PageFetched } from '@trawl/schemas';
import { Pipeline } from '../src/pipeline.ts';
import { startShapedLink, type LinkShape, type ShapedLink } from './shaped-link.ts';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '5000' },
    workers: { type: 'string', default: '2' },
    links: { type: 'string', default: '10' },
    'page-bytes': { type: 'string', default: '16384' },
    'link-mbit': { type: 'string' },
    'link-delay-ms': { type: 'string', default: '5' },
  },
});
const pages = Number(values.pages);
const workers = Number(values.workers);
const links = Number(values.links);
const pageBytes = Number(values['page-bytes']);
const shape: LinkShape | null = values['link-mbit'] === undefined ? null : { mbit: Number(values['link-mbit']), delayMs: Number(values['link-delay-ms']) };
if (shape && !(shape.mbit > 0 && shape.delayMs >= 0)) throw new Error(`--link-mbit must be > 0 and --link-delay-ms ≥ 0, got ${values['link-mbit']} and ${values['link-delay-ms']}`);
const USER = 'bench-recrawl';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface CrawlFigures {
  readonly pages: number;
  readonly items: number;
  /** From JobDispatched to JobCompleted, on the events' clocks. */
  readonly job_seconds: number;
  readonly pages_per_second: number;
  readonly requests: number;
  readonly not_modified: number;
  readonly bytes_sent: number;
  readonly from_cache: number;
}

async function crawl(pipeline: Pipeline, site: TestSite, home: string, spec: Partial<CrawlSpec>): Promise<CrawlFigures> {
  site.reset();
  const bytesBefore = site.bytesSent();
  const jobId = randomUUID();
  await pipeline.producer.emit(
    'JobDispatched',
    {
      job_id: jobId, user_id: USER, target_id: null, schedule_id: null, search_url: home, start_urls: [home], keywords: [], location: null,
      spec: { ...crawlSpec(null, { depth: 100, max_pages: pages * 2 }), ...site.spec, ...spec }, attempt: 1, params: {},
    },
    { topic: pipeline.topics.jobs },
  );
  const started = performance.now();
  let completed: JobCompleted | undefined;
  let lastReport = started;
  while (!completed) {
    await sleep(500);
    const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.jobs]);
    completed = events.map((e) => e.event.value as JobCompleted).find((v) => v.job_id === jobId && 'outcome' in v);
    if (performance.now() - lastReport > 5_000) {
      lastReport = performance.now();
      process.stderr.write(`  ${site.accessLog.entries().length} requests served after ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    }
    if (performance.now() - started > 30 * 60_000) throw new Error('crawl did not complete in 30 minutes');
  }
  const fetched = (await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.pages])).map((e) => e.event.value as PageFetched).filter((p) => p.job_id === jobId && 'from_cache' in p);
  const seconds = (completed.occurred_at.getTime() - completed.started_at.getTime()) / 1000;
  const log = site.accessLog.entries();
  return {
    pages: completed.pages_fetched,
    items: completed.items_extracted,
    job_seconds: Number(seconds.toFixed(2)),
    pages_per_second: Number((completed.pages_fetched / seconds).toFixed(1)),
    requests: log.length,
    not_modified: log.filter((e) => e.status === 304).length,
    bytes_sent: site.bytesSent() - bytesBefore,
    from_cache: new Set(fetched.filter((p) => p.from_cache !== null).map((p) => p.fetch_id)).size,
  };
}

/** Until projector-pg holds an HTTP cache entry for every page of the first crawl. */
async function cacheFilled(pipeline: Pipeline, expected: number): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const { rows } = await pipeline.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM http_cache WHERE user_id = $1', [USER]).catch(() => ({ rows: [{ n: 0 }] }));
    if (rows[0]!.n >= expected) return;
    if (Date.now() > deadline) throw new Error(`http_cache holds ${rows[0]!.n} of ${expected} entries after 10 minutes`);
    await sleep(1_000);
  }
}

const bucket = `trawl-bench-${randomUUID().slice(0, 8)}`;
const site = await createTestSite({ pages, linksPerPage: links, itemsPerPage: 2, traps: false, pageBytes });
const link: ShapedLink | null = shape ? await startShapedLink({ host: '127.0.0.1', port: Number(new URL(site.origin).port) }, shape) : null;
const home = link ? `${link.origin}/` : site.home;
const pipeline = await Pipeline.start({ env: { TRAWL_S3_BUCKET: bucket } });
const store = new ContentStore({ ...contentStoreConfig(), bucket });
try {
  pipeline.spawn('frontier');
  for (let i = 0; i < workers; i++) pipeline.spawn('worker');
  pipeline.spawn('projector-pg');
  // Let the children join their groups before the clock starts.
  await sleep(8_000);
  process.stderr.write(`first crawl of ${pages} pages (${pageBytes} B each)${shape ? `, the site behind ${shape.mbit} Mbit/s and ${shape.delayMs} ms each way` : ''}…\n`);
  const first = await crawl(pipeline, site, home, { store_in_cache: true });
  process.stderr.write('waiting for projector-pg to hold the cache entries…\n');
  await cacheFilled(pipeline, first.pages);
  process.stderr.write('recrawl of the unchanged site…\n');
  const recrawl = await crawl(pipeline, site, home, { store_in_cache: true });
  process.stderr.write('crawl within max_age…\n');
  const fresh = await crawl(pipeline, site, home, { max_age: 86_400, store_in_cache: true });

  const speedup = recrawl.pages_per_second / first.pages_per_second;
  const fewerBytes = first.bytes_sent / Math.max(1, recrawl.bytes_sent);
  const result = {
    benchmark: 'recrawl',
    pages,
    workers,
    page_bytes: pageBytes,
    link: shape,
    load_average: loadavg().map((l) => Number(l.toFixed(1))),
    first,
    recrawl,
    max_age: fresh,
    recrawl_speedup: Number(speedup.toFixed(2)),
    recrawl_fewer_bytes: Number(fewerBytes.toFixed(1)),
    meets_target: { speedup_5x: speedup >= 5, fewer_bytes_10x: fewerBytes >= 10 },
  };
  const row = (name: string, f: CrawlFigures) =>
    `${name.padEnd(10)} ${String(f.pages).padStart(6)} ${f.job_seconds.toFixed(1).padStart(8)} ${f.pages_per_second.toFixed(1).padStart(8)} ${String(f.requests).padStart(8)} ${String(f.not_modified).padStart(6)} ${String(f.bytes_sent).padStart(12)} ${String(f.from_cache).padStart(6)}\n`;
  process.stdout.write(`${'crawl'.padEnd(10)} ${'pages'.padStart(6)} ${'seconds'.padStart(8)} ${'pages/s'.padStart(8)} ${'requests'.padStart(8)} ${'304s'.padStart(6)} ${'bytes sent'.padStart(12)} ${'cached'.padStart(6)}\n`);
  process.stdout.write(row('first', first) + row('recrawl', recrawl) + row('max_age', fresh));
  process.stdout.write(`recrawl: ${result.recrawl_speedup}× the pages/s, ${result.recrawl_fewer_bytes}× fewer bytes (target ≥ 5×, ≥ 10×)${shape ? `; the site behind ${shape.mbit} Mbit/s, ${shape.delayMs} ms each way` : '; the site on this machine, unshaped'}; load ${result.load_average.join(' ')}\n`);
  process.stdout.write(JSON.stringify(result) + '\n');
  const out = join(repoRoot, 'bench-results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'recrawl.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  await pipeline.stop();
  await link?.close();
  await site.close();
  await store.delete(await store.list()).catch(() => undefined);
  store.close();
}
