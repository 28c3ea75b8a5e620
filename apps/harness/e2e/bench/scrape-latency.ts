/**
 * Latency and throughput of `POST /scrape` (issue 35, item 1): the API, a frontier, `--workers`
 * workers and the Postgres projector as processes on the real stack, scraping pages of about
 * `--page-bytes` from a local site. The targets: p50 ≤ 100 ms, p99 ≤ 400 ms, ≥ 100 scrapes/s.
 *
 *   npm run bench:scrape -w @trawl/e2e -- [--requests 200] [--concurrency 16] [--seconds 15]
 *     [--workers 2] [--page-bytes 20480] [--formats markdown] [--users 1] [--sites 1]
 *
 * Latency: `--requests` scrapes one after another (each a different page, so no answer comes from a
 * cache), the time from the request to the answer. Throughput: `--concurrency` clients scraping for
 * `--seconds`, answers with the page a second, spread over `--users` users (each
 * its own key; a user's new jobs take that user's quota lock one at a time, so one user's scrapes
 * are admitted in series). `--sites` serves the pages from that many local sites, each a host of its
 * own (its port), the scrapes taking them in turn: the fetch topic is keyed by host, so one site's
 * scrapes are all fetched by one worker, and several spread over the workers as a scrape API's
 * many hosts do. The user's quotas and the crawl rate limit are raised
 * so that they do not bind. Prints the figures with the load average and one JSON line; writes
 * bench-results/scrape.json.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createTestSite } from '@trawl/demo-site';
import { readEvents, repoRoot, trawlHome } from '@trawl/streams';
import { Pipeline } from '../src/pipeline.ts';
import { apiClient, until } from '../src/api-client.ts';
import { startApiPipeline } from '../src/api-pipeline.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '15' },
    workers: { type: 'string', default: '2' },
    'page-bytes': { type: 'string', default: '20480' },
    formats: { type: 'string', default: 'markdown' },
    users: { type: 'string', default: '1' },
    sites: { type: 'string', default: '1' },
  },
});
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const seconds = Number(values.seconds);
const workers = Number(values.workers);
const pageBytes = Number(values['page-bytes']);
const users = Number(values.users);
const siteCount = Number(values.sites);
const formats = values.formats.split(',').map((f) => f.trim()).filter(Boolean);
if (![requests, concurrency, seconds, workers, pageBytes, users, siteCount].every((n) => Number.isInteger(n) && n >= 1)) throw new Error('every option must be a positive whole number');

/** CPU time (user + system, ms) of each service process so far, by app and index; empty without /proc. */
function serviceCpuMs(p: Pipeline): Record<string, number> {
  const out: Record<string, number> = {};
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  p.children.forEach((c, i) => {
    try {
      const fields = readFileSync(`/proc/${c.process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out[`${c.app}-${i}`] = (Number(fields[11]) + Number(fields[12])) * tick;
    } catch {
      // Not Linux, or the child is gone.
    }
  });
  return out;
}

/** CPU time (ms) of a process by pid (user + system; children not counted), undefined when unreadable. */
function cpuOfPid(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) of the local stack's parts the scrape path uses (Kafka, the S3 server, Postgres with
 * its backends), from their pid files; {} where there are none. The stack is shared: whatever else
 * uses it meanwhile (another test) counts here too.
 */
function stackCpuMs(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of ['kafka', 's3', 'postgres']) {
    let pid: number;
    try {
      pid = Number(readFileSync(join(trawlHome(), 'run', `${part}.pid`), 'utf8').trim());
    } catch {
      continue;
    }
    let ms = cpuOfPid(pid);
    if (ms === undefined) continue;
    if (part === 'postgres') {
      // A backend per connection, each a child of the postmaster.
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
          if (Number(fields[1]) === pid) ms += (Number(fields[11]) + Number(fields[12])) * 10;
        } catch {
          // Gone meanwhile.
        }
      }
    }
    out[part] = ms;
  }
  return out;
}

const quantile = (xs: readonly number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

const loadAtStart = loadavg().map((l) => Number(l.toFixed(2)));
const PAGES = 5_000;
/** The pause in which each service's idle CPU is measured. */
const IDLE_MS = 3_000;
const sites = await Promise.all(Array.from({ length: siteCount }, () => createTestSite({ pages: PAGES, linksPerPage: 3, itemsPerPage: 2, traps: false, pageBytes })));
const { pipeline, base, keys } = await startApiPipeline({
  env: { TRAWL_QUOTA_ACTIVE_JOBS: '100000', TRAWL_QUOTA_PAGES_PER_DAY: '10000000', TRAWL_API_CRAWL_RATE_LIMIT: '1000000', TRAWL_API_RATE_LIMIT: '1000000' },
  users: Array.from({ length: users }, (_, i) => `bench-scraper-${i}`),
  workers,
});
try {
  const apis = keys.map((key) => apiClient(base, key));
  let next = 1;
  let failed = 0;
  /** Measured scrapes: job id → the phase, when the request left and when the answer came (epoch ms). */
  const timed = new Map<string, { phase: 'sequential' | 'load'; sent: number; answered: number }>();
  let recording: 'sequential' | 'load' | null = null;
  const scrape = async (): Promise<{ ms: number; live: boolean }> => {
    const sent = Date.now();
    const n = next++;
    const url = sites[n % siteCount]!.urlOf(Math.floor(n / siteCount) % PAGES);
    const api = apis[n % users]!;
    const started = performance.now();
    const res = await api('POST', '/scrape', { url, formats: [...formats, 'links'] });
    const ms = performance.now() - started;
    if (recording) timed.set(res.body.job_id as string, { phase: recording, sent, answered: Date.now() });
    if (res.status !== 200) throw new Error(`scrape of ${url}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    if (res.body.ok !== true) {
      failed++;
      console.error(`scrape of ${url} not ok: ${JSON.stringify(res.body.error)}`);
    }
    return { ms, live: Array.isArray((res.body.formats as Record<string, unknown> | undefined)?.links) };
  };
  // Warm up until answers come from the live subscription (it joins in the background).
  await until(scrape, (r) => r.live, 60_000, 'a scrape answered live', pipeline);
  for (let i = 0; i < 20; i++) await scrape();

  recording = 'sequential';
  const latencies: number[] = [];
  let fromReadModel = 0;
  for (let i = 0; i < requests; i++) {
    const r = await scrape();
    latencies.push(r.ms);
    if (!r.live) fromReadModel++;
  }

  // Each service's CPU while idle (consumers polling, timers), over a short pause, to take out of
  // the load phase's: what is left is what the scrapes cost, less dependent on how many a second
  // a busy machine let through (idle costs spread over fewer scrapes look like a dearer scrape).
  const idleFrom = serviceCpuMs(pipeline);
  const idleStarted = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idleTo = serviceCpuMs(pipeline);
  const idleSeconds = (performance.now() - idleStarted) / 1000;
  const idleMsPerSecond = Object.fromEntries(Object.entries(idleTo).map(([name, ms]) => [name, (ms - (idleFrom[name] ?? ms)) / idleSeconds]));

  recording = 'load';
  const cpuBefore = serviceCpuMs(pipeline);
  const stackBefore = stackCpuMs();
  let done = 0;
  const loadLatencies: number[] = [];
  const until_ = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until_) {
        loadLatencies.push((await scrape()).ms);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  recording = null;
  // Each service's CPU over the load phase, per scrape answered (Linux /proc; {} elsewhere).
  const cpuAfter = serviceCpuMs(pipeline);
  const stackAfter = stackCpuMs();
  const cpuPerScrape = Object.fromEntries(Object.entries(cpuAfter).map(([name, ms]) => [name, Number(((ms - (cpuBefore[name] ?? 0)) / Math.max(1, done)).toFixed(1))]));
  const stackPerScrape = Object.fromEntries(Object.entries(stackAfter).map(([name, ms]) => [name, Number(((ms - (stackBefore[name] ?? ms)) / Math.max(1, done)).toFixed(1))]));
  const servicesPerScrape = Number(Object.values(cpuPerScrape).reduce((a, b) => a + b, 0).toFixed(1));
  const netPerScrape = Object.fromEntries(Object.entries(cpuAfter).map(([name, ms]) => [name, Number(Math.max(0, (ms - (cpuBefore[name] ?? 0) - (idleMsPerSecond[name] ?? 0) * elapsed) / Math.max(1, done)).toFixed(1))]));
  const servicesNetPerScrape = Number(Object.values(netPerScrape).reduce((a, b) => a + b, 0).toFixed(1));

  // Where the time of a scrape goes, from the Kafka records' timestamps (set by each producer as it
  // sends; one machine, one clock): the API's admission up to its produce, the frontier's hop
  // (JobDispatched → FetchRequested), the worker's (FetchRequested → PageFetched, the fetch itself
  // apart), and the answer (PageFetched → the API's answer: the live feed, the content store, metadata).
  const events = await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.jobs, pipeline.topics.pages, pipeline.topics.fetch]);
  const at = new Map<string, Record<string, number>>();
  for (const { event, timestamp } of events) {
    const v = event.value as { job_id?: string; fetch_ms?: number };
    if (!v.job_id || !timed.has(v.job_id)) continue;
    const row = at.get(v.job_id) ?? {};
    row[event.name] ??= Number(timestamp);
    if (event.name === 'PageFetched') row.fetch_ms = v.fetch_ms ?? 0;
    at.set(v.job_id, row);
  }
  const stagesOf = (phase: 'sequential' | 'load') => {
    const stage = (f: (t: { sent: number; answered: number }, r: Record<string, number>) => number | undefined) => {
      const xs = [...timed].filter(([, t]) => t.phase === phase).map(([id, t]) => f(t, at.get(id) ?? {})).filter((x): x is number => x !== undefined && Number.isFinite(x));
      return xs.length === 0 ? null : { p50: Math.round(quantile(xs, 0.5)), p99: Math.round(quantile(xs, 0.99)) };
    };
    return {
      api_to_dispatched: stage((t, r) => r.JobDispatched! - t.sent),
      frontier: stage((_t, r) => r.FetchRequested! - r.JobDispatched!),
      worker: stage((_t, r) => r.PageFetched! - r.FetchRequested!),
      fetch_ms: stage((_t, r) => r.fetch_ms),
      page_to_answer: stage((t, r) => t.answered - r.PageFetched!),
    };
  };
  const stages = stagesOf('load');
  const sequentialStages = stagesOf('sequential');

  const result = {
    bench: 'scrape',
    page_bytes: pageBytes,
    formats,
    workers,
    users,
    sites: siteCount,
    sequential: { requests, p50_ms: Math.round(quantile(latencies, 0.5)), p99_ms: Math.round(quantile(latencies, 0.99)), max_ms: Math.round(Math.max(...latencies)), from_read_model: fromReadModel },
    load: { concurrency, seconds: Number(elapsed.toFixed(1)), scrapes: done, per_second: Number((done / elapsed).toFixed(1)), p50_ms: Math.round(quantile(loadLatencies, 0.5)), p99_ms: Math.round(quantile(loadLatencies, 0.99)) },
    not_ok: failed,
    load_cpu_ms_per_scrape: cpuPerScrape,
    load_services_cpu_ms_per_scrape: servicesPerScrape,
    idle_cpu_ms_per_second: Object.fromEntries(Object.entries(idleMsPerSecond).map(([k, v]) => [k, Number(v.toFixed(1))])),
    load_net_cpu_ms_per_scrape: netPerScrape,
    load_services_net_cpu_ms_per_scrape: servicesNetPerScrape,
    load_stack_cpu_ms_per_scrape: stackPerScrape,
    sequential_stages_ms: sequentialStages,
    load_stages_ms: stages,
    loadavg_start: loadAtStart,
    loadavg: loadavg().map((l) => Number(l.toFixed(2))),
    at: new Date().toISOString(),
  };
  console.log(`sequential: ${requests} scrapes of ${pageBytes} B pages — p50 ${result.sequential.p50_ms} ms, p99 ${result.sequential.p99_ms} ms, max ${result.sequential.max_ms} ms (${fromReadModel} from the read model)`);
  console.log(`load: ${concurrency} clients (${users} users) for ${result.load.seconds} s — ${done} scrapes, ${result.load.per_second}/s, p50 ${result.load.p50_ms} ms, p99 ${result.load.p99_ms} ms`);
  console.log(`sequential stages (p50/p99 ms): ${Object.entries(sequentialStages).map(([k, v]) => `${k} ${v?.p50}/${v?.p99}`).join(', ')}`);
  console.log(`load stages (p50/p99 ms): ${Object.entries(stages).map(([k, v]) => `${k} ${v?.p50}/${v?.p99}`).join(', ')}`);
  console.log(`load CPU ms a scrape: ${Object.entries(cpuPerScrape).map(([k, v]) => `${k} ${v}`).join(', ')} (services ${servicesPerScrape}; less their idle CPU: ${Object.entries(netPerScrape).map(([k, v]) => `${k} ${v}`).join(', ')}, services ${servicesNetPerScrape}); the shared stack's: ${Object.entries(stackPerScrape).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`pages not ok: ${failed}; load average: ${result.loadavg.join(' ')} (at the start: ${loadAtStart.join(' ')})`);
  console.log(JSON.stringify(result));
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'scrape.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await pipeline.stop();
  await Promise.all(sites.map((s) => s.close()));
}
