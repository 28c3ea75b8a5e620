/**
 * Fairness between tenants on one worker (issue 32, item 6): a second user's small crawl alone, and
 * beside a big crawl of many slow hosts by another user, through a whole pipeline (a frontier and
 * one worker as processes on the real stack). The target: beside, within 2× its time alone.
 *
 *   npm run bench:fairness -w @trawl/e2e -- [--hosts 300] [--host-pages 3] [--latency-ms 2000]
 *     [--jitter-ms 2000] [--small-pages 40] [--rounds 3] [--concurrency 16] [--compare]
 *
 * The big crawl: `--hosts` local HTTP servers (each its own host, `127.0.0.1:<port>`), each a home page
 * linking to `--host-pages − 1` pages, every page answering after `--latency-ms` plus up to
 * `--jitter-ms` (fixed per page: slow hosts are not all equally slow); all homes are its
 * start URLs, so its fetches fill every partition of `trawl.fetch` at once. The small crawl: a
 * generated site of `--small-pages` pages on one host answering at once, crawled to its end. The worker
 * runs `--concurrency` fetches per partition (TRAWL_WORKER_CONCURRENCY; 4 partitions).
 *
 * Each round times the small crawl (JobDispatched produced → JobCompleted's `occurred_at`) alone,
 * then again a few seconds into a fresh big crawl. `--compare` runs the same on a second pipeline
 * whose worker hands over no more fetches than may run (TRAWL_WORKER_QUEUE = TRAWL_WORKER_CONCURRENCY):
 * the consumer's offset order decides whose fetch runs next, as before the fetch slots were shared.
 *
 * Prints a line per crawl, the medians and ratio, and one JSON line; writes bench-results/fairness.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import { readEvents, repoRoot } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import type { CrawlSpec, JobCompleted } from '@trawl/schemas';
import { Pipeline } from '../src/pipeline.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '300' },
    'host-pages': { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '2000' },
    'jitter-ms': { type: 'string', default: '2000' },
    'small-pages': { type: 'string', default: '40' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '16' },
    compare: { type: 'boolean', default: false },
  },
});
const hosts = Number(values.hosts);
const hostPages = Number(values['host-pages']);
const latencyMs = Number(values['latency-ms']);
const jitterMs = Number(values['jitter-ms']);
const smallPages = Number(values['small-pages']);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
if (![hosts, hostPages, smallPages, rounds, concurrency].every((n) => Number.isInteger(n) && n >= 1) || !(latencyMs >= 0 && jitterMs >= 0)) throw new Error('every option must be a positive whole number');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A page's extra delay, in [0, jitterMs], the same on every run. */
const jitterOf = (host: number, path: string) => {
  let h = host * 2_654_435_761;
  for (const c of path) h = Math.imul(h ^ c.charCodeAt(0), 16_777_619) >>> 0;
  return jitterMs > 0 ? h % (jitterMs + 1) : 0;
};

/** The big crawl's hosts: one server (own port, so own host) each, every page late by `latencyMs` and its jitter. */
async function slowHosts(): Promise<{ readonly homes: string[]; readonly served: () => number; close(): Promise<void> }> {
  const servers: Server[] = [];
  let served = 0;
  const links = Array.from({ length: hostPages - 1 }, (_, i) => `<a href="/p/${i + 1}">page ${i + 1}</a>`).join(' ');
  for (let h = 0; h < hosts; h++) {
    const server = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      setTimeout(() => {
        served++;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><body><h1>${req.url}</h1>${req.url === '/' ? links : ''}</body></html>`);
      }, latencyMs + jitterOf(h, req.url ?? '/'));
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  return {
    homes: servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/`),
    served: () => served,
    async close() {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    },
  };
}

async function dispatch(pipeline: Pipeline, user: string, startUrls: readonly string[], spec: CrawlSpec): Promise<string> {
  const jobId = randomUUID();
  await pipeline.producer.emit(
    'JobDispatched',
    { job_id: jobId, user_id: user, target_id: null, schedule_id: null, search_url: startUrls[0]!, start_urls: [...startUrls], keywords: [], location: null, spec, attempt: 1, params: {} },
    { topic: pipeline.topics.jobs },
  );
  return jobId;
}

async function completion(pipeline: Pipeline, jobId: string, timeoutMs = 15 * 60_000): Promise<JobCompleted> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.jobs]);
    const done = events.find((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId);
    if (done) return done.event.value as JobCompleted;
    if (Date.now() > until) throw new Error(`job ${jobId} did not complete in ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

interface SmallCrawl {
  readonly seconds: number;
  readonly pages: number;
}

async function smallCrawl(pipeline: Pipeline, site: TestSite): Promise<SmallCrawl> {
  const spec = { ...crawlSpec(null, { depth: 100, max_pages: smallPages * 2, sitemap: 'skip' }), ...site.spec };
  const t0 = Date.now();
  const done = await completion(pipeline, await dispatch(pipeline, 'bench-small', [site.home], spec));
  return { seconds: (done.occurred_at.getTime() - t0) / 1000, pages: done.pages_fetched };
}

interface VariantFigures {
  readonly variant: string;
  readonly alone_seconds: number[];
  readonly beside_seconds: number[];
  readonly big_requests_before_small: number[];
  readonly alone_median: number;
  readonly beside_median: number;
  readonly ratio: number;
}

async function runVariant(variant: string, env: Record<string, string>, site: TestSite): Promise<VariantFigures> {
  const pipeline = await Pipeline.start({ env: { TRAWL_WORKER_CONCURRENCY: String(concurrency), ...env } });
  const alone: number[] = [];
  const beside: number[] = [];
  const bigServedBefore: number[] = [];
  try {
    pipeline.spawn('frontier');
    pipeline.spawn('worker');
    await sleep(8_000); // the children join their groups
    await smallCrawl(pipeline, site); // warm-up: compiled paths, robots.txt cached
    for (let round = 1; round <= rounds; round++) {
      const a = await smallCrawl(pipeline, site);
      alone.push(a.seconds);
      process.stdout.write(`  ${variant} round ${round}: small crawl alone ${a.seconds.toFixed(2)} s (${a.pages} pages)\n`);
      const big = await slowHosts();
      try {
        const bigSpec = { ...crawlSpec(null, { depth: 1, max_pages: hosts * hostPages * 2, sitemap: 'skip' }), host_concurrency: 2 };
        const bigJob = await dispatch(pipeline, 'bench-big', big.homes, bigSpec);
        // Into the big crawl: its seeds have filled the worker's slots and wait behind them.
        while (big.served() < concurrency) await sleep(100);
        await sleep(latencyMs);
        bigServedBefore.push(big.served());
        const b = await smallCrawl(pipeline, site);
        beside.push(b.seconds);
        process.stdout.write(`  ${variant} round ${round}: small crawl beside ${hosts} slow hosts ${b.seconds.toFixed(2)} s (${b.pages} pages; big crawl had ${bigServedBefore.at(-1)} pages served)\n`);
        await completion(pipeline, bigJob);
      } finally {
        await big.close();
      }
    }
  } finally {
    await pipeline.stop();
  }
  const figures = { variant, alone_seconds: alone, beside_seconds: beside, big_requests_before_small: bigServedBefore, alone_median: median(alone), beside_median: median(beside) };
  return { ...figures, ratio: Number((figures.beside_median / figures.alone_median).toFixed(2)) };
}

const site = await createTestSite({ pages: smallPages, linksPerPage: 3, itemsPerPage: 2, traps: false });
const results: VariantFigures[] = [];
try {
  const load = loadavg()[0]!;
  results.push(await runVariant('fair slots', {}, site));
  if (values.compare) results.push(await runVariant('offset order (before)', { TRAWL_WORKER_QUEUE: String(concurrency) }, site));
  process.stdout.write(`\nsmall crawl of ${smallPages} pages; big crawl of ${hosts} hosts × ${hostPages} pages at ${latencyMs}–${latencyMs + jitterMs} ms; worker concurrency ${concurrency} a partition; load ${load.toFixed(1)}\n`);
  for (const r of results) process.stdout.write(`  ${r.variant.padEnd(22)} alone ${r.alone_median.toFixed(2)} s, beside ${r.beside_median.toFixed(2)} s: ${r.ratio}× (target ≤ 2×)\n`);
  const result = { benchmark: 'tenant-fairness', hosts, host_pages: hostPages, latency_ms: latencyMs, jitter_ms: jitterMs, small_pages: smallPages, rounds, concurrency, load_average: Number(load.toFixed(1)), results };
  process.stdout.write(JSON.stringify(result) + '\n');
  const out = join(repoRoot, 'bench-results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'fairness.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  await site.close();
}
