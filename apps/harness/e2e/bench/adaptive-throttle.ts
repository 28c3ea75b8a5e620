/**
 * Adaptive throttling against a sweep of fixed settings (issue 33, "Prove": adaptive throttling as a
 * benchmark), through a whole pipeline (a frontier and one worker as processes on the real stack).
 *
 *   npm run bench:throttle -w @trawl/e2e -- [--pages 1000] [--base-ms 20] [--per-in-flight-ms 10]
 *     [--cap 12] [--concurrency 2,4,8,12,16] [--delays 0,10,20] [--rounds 1] [--adaptive-rounds 3] [--run-timeout-s 120]
 *
 * The site (demo-site's createLoadedSite) answers each page after `base + k × in flight` and 503s
 * a request arriving while `cap` are in flight; its home links every page. Each run crawls it
 * whole as a fresh job (JobDispatched → JobCompleted's `occurred_at`): first every fixed setting
 * (`host_concurrency` × `host_delay_ms`), then `adaptive_throttle: true` with the sweep's largest
 * concurrency as its bound and no delay. A run's error rate is the site's 503s over its answers.
 * The best fixed setting is the fastest with an error rate under 1%; the target is the adaptive
 * runs' median within 15% of it, with an error rate under 1%.
 *
 * Each run has a site of its own and `--run-timeout-s` (a fixed setting over the cap pauses on its
 * 503s and may take many minutes; it is recorded as not over, and cannot be the best).
 *
 * Prints a table, then one JSON line; writes bench-results/adaptive-throttle.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createLoadedSite, type LoadedSite } from '@trawl/demo-site';
import { readEvents, repoRoot } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import type { CrawlSpec, JobCompleted } from '@trawl/schemas';
import { Pipeline } from '../src/pipeline.ts';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '1000' },
    'base-ms': { type: 'string', default: '20' },
    'per-in-flight-ms': { type: 'string', default: '10' },
    cap: { type: 'string', default: '12' },
    concurrency: { type: 'string', default: '2,4,8,12,16' },
    delays: { type: 'string', default: '0,10,20' },
    rounds: { type: 'string', default: '1' },
    'adaptive-rounds': { type: 'string', default: '3' },
    'run-timeout-s': { type: 'string', default: '120' },
  },
});
const pages = Number(values.pages);
const baseMs = Number(values['base-ms']);
const perInFlightMs = Number(values['per-in-flight-ms']);
const cap = Number(values.cap);
const concurrencies = values.concurrency.split(',').map(Number);
const delays = values.delays.split(',').map(Number);
const rounds = Number(values.rounds);
const adaptiveRounds = Number(values['adaptive-rounds']);
const runTimeoutMs = Number(values['run-timeout-s']) * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Run {
  readonly setting: string;
  readonly host_concurrency: number;
  readonly host_delay_ms: number;
  readonly adaptive: boolean;
  readonly seconds: number;
  readonly pages: number;
  readonly pages_per_second: number;
  readonly site_answers: number;
  readonly site_errors: number;
  readonly error_rate: number;
  readonly max_in_flight: number;
  /** The run did not end within --run-timeout-s: its figures are those of the pages fetched by then. */
  readonly timed_out?: boolean;
  /** What the worker's throttle chose for the site's host at the end (adaptive runs). */
  readonly chose?: { delay_ms: number | null; concurrency: number | null };
}

/** The job's JobCompleted, or null when it has not come within `timeoutMs`. */
async function completion(pipeline: Pipeline, jobId: string, timeoutMs: number): Promise<JobCompleted | null> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.jobs]);
    const done = events.find((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId);
    if (done) return done.event.value as JobCompleted;
    if (Date.now() > until) return null;
    await sleep(100);
  }
}

/** The worker's throttle gauges for the site's host, from its /metrics. */
async function throttleGauges(pipeline: Pipeline, host: string): Promise<{ delay_ms: number | null; concurrency: number | null }> {
  const worker = pipeline.children.find((c) => c.app === 'worker');
  if (!worker?.operatorUrl) return { delay_ms: null, concurrency: null };
  const text = await fetch(`${worker.operatorUrl}/metrics`).then((r) => r.text()).catch(() => '');
  const read = (name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{host="${host}"}`));
    return line ? Number(line.split(' ').at(-1)) : null;
  };
  return { delay_ms: read('trawl_worker_throttle_delay_ms'), concurrency: read('trawl_worker_throttle_concurrency') };
}

/**
 * One run, on a site of its own (its own port, so its own host): a run past its time budget leaves
 * its job behind, and that job's host state and requests must not touch the next run.
 */
async function crawl(pipeline: Pipeline, setting: { host_concurrency: number; host_delay_ms: number; adaptive: boolean }): Promise<Run> {
  const site = await createLoadedSite({ pages, baseMs, perInFlightMs, cap });
  try {
    return await crawlSite(pipeline, site, setting);
  } finally {
    await site.close();
  }
}

async function crawlSite(pipeline: Pipeline, site: LoadedSite, setting: { host_concurrency: number; host_delay_ms: number; adaptive: boolean }): Promise<Run> {
  const spec: CrawlSpec = {
    ...crawlSpec(null, { depth: 1, max_pages: pages * 2, sitemap: 'skip' }),
    host_concurrency: setting.host_concurrency,
    host_delay_ms: setting.host_delay_ms,
    adaptive_throttle: setting.adaptive,
  };
  const jobId = randomUUID();
  site.resetStats();
  const t0 = Date.now();
  await pipeline.producer.emit(
    'JobDispatched',
    { job_id: jobId, user_id: 'bench-throttle', target_id: null, schedule_id: null, search_url: site.home, start_urls: [site.home], keywords: [], location: null, spec, attempt: 1, params: {} },
    { topic: pipeline.topics.jobs },
  );
  const done = await completion(pipeline, jobId, runTimeoutMs);
  const s = site.stats();
  const seconds = ((done?.occurred_at.getTime() ?? Date.now()) - t0) / 1000;
  const fetchedPages = done?.pages_fetched ?? s.ok;
  const answers = s.ok + s.errors;
  const name = setting.adaptive ? `adaptive (≤ ${setting.host_concurrency})` : `c=${setting.host_concurrency} d=${setting.host_delay_ms}ms`;
  const chose = setting.adaptive ? await throttleGauges(pipeline, new URL(site.home).host) : undefined;
  return {
    setting: name,
    ...setting,
    seconds,
    pages: fetchedPages,
    pages_per_second: Number((fetchedPages / seconds).toFixed(1)),
    site_answers: answers,
    site_errors: s.errors,
    error_rate: answers ? Number((s.errors / answers).toFixed(4)) : 0,
    max_in_flight: s.maxInFlight,
    ...(chose ? { chose } : {}),
    ...(done ? {} : { timed_out: true }),
  };
}

const line = (r: Run) =>
  `  ${r.setting.padEnd(18)} ${r.seconds.toFixed(2).padStart(7)} s ${String(r.pages).padStart(5)} pages ${r.pages_per_second.toFixed(1).padStart(7)} pages/s  errors ${String(r.site_errors).padStart(4)} (${(r.error_rate * 100).toFixed(2)}%)  max in flight ${r.max_in_flight}${r.timed_out ? `  (not over in ${runTimeoutMs / 1000} s)` : ''}${r.chose ? `  chose c=${r.chose.concurrency} d=${r.chose.delay_ms}ms` : ''}\n`;

const pipeline = await Pipeline.start({ env: { TRAWL_WORKER_CONCURRENCY: '32', TRAWL_FETCH_RETRY_DELAYS_MS: '500,1000,2000', TRAWL_HOST_MAX_CONCURRENCY: String(Math.max(...concurrencies)) } });
const fixed: Run[] = [];
const adaptive: Run[] = [];
const loadBefore = loadavg();
try {
  pipeline.spawn('frontier');
  pipeline.spawn('worker');
  await pipeline.groupSettled('trawl-worker', 1);
  // Warm-up: compiled paths, connections, robots.txt cached.
  await crawl(pipeline, { host_concurrency: 4, host_delay_ms: 0, adaptive: false });
  process.stdout.write(`site: ${pages} pages, latency ${baseMs} + ${perInFlightMs} × in flight ms, 503 at ${cap} in flight\n`);
  // Adaptive first: a fixed run over the site's cap may end past its budget and leave its job behind.
  for (let round = 0; round < adaptiveRounds; round++) {
    const r = await crawl(pipeline, { host_concurrency: Math.max(...concurrencies), host_delay_ms: 0, adaptive: true });
    adaptive.push(r);
    process.stdout.write(line(r));
  }
  for (let round = 0; round < rounds; round++) {
    for (const c of concurrencies) {
      for (const d of delays) {
        const r = await crawl(pipeline, { host_concurrency: c, host_delay_ms: d, adaptive: false });
        fixed.push(r);
        process.stdout.write(line(r));
      }
    }
  }
} finally {
  await pipeline.stop();
}

const eligible = fixed.filter((r) => r.error_rate < 0.01 && !r.timed_out);
const best = eligible.reduce<Run | null>((b, r) => (!b || r.pages_per_second > b.pages_per_second ? r : b), null);
const adaptiveMedian = median(adaptive.map((r) => r.pages_per_second));
const adaptiveErrorRate = adaptive.reduce((n, r) => n + r.site_errors, 0) / Math.max(1, adaptive.reduce((n, r) => n + r.site_answers, 0));
const ratio = best ? adaptiveMedian / best.pages_per_second : 0;
const met = ratio >= 0.85 && adaptiveErrorRate < 0.01;
const load = loadavg();
process.stdout.write(
  `\nbest fixed (error rate < 1%): ${best ? `${best.setting}, ${best.pages_per_second} pages/s` : 'none'}\n` +
    `adaptive: median ${adaptiveMedian} pages/s (${(ratio * 100).toFixed(0)}% of the best fixed), error rate ${(adaptiveErrorRate * 100).toFixed(2)}% — target ≥ 85% with < 1%: ${met ? 'met' : 'NOT met'}\n` +
    `load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${load.map((l) => l.toFixed(2)).join(' ')}\n`,
);
const result = {
  benchmark: 'adaptive-throttle',
  site: { pages, base_ms: baseMs, per_in_flight_ms: perInFlightMs, cap },
  load_average_before: loadBefore.map((l) => Number(l.toFixed(2))),
  load_average_after: load.map((l) => Number(l.toFixed(2))),
  fixed,
  adaptive,
  best_fixed: best?.setting ?? null,
  best_fixed_pages_per_second: best?.pages_per_second ?? null,
  adaptive_median_pages_per_second: adaptiveMedian,
  adaptive_error_rate: Number(adaptiveErrorRate.toFixed(4)),
  ratio: Number(ratio.toFixed(3)),
  target_met: met,
};
process.stdout.write(JSON.stringify(result) + '\n');
const out = join(repoRoot, 'bench-results');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'adaptive-throttle.json'), JSON.stringify(result, null, 2) + '\n');
