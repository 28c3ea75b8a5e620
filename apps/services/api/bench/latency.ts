/**
 * `npm run bench -w @trawl/api`: latency of `POST /crawl` (every request a new job: ignore_cache)
 * under load from autocannon, and latency of the first live event — the time from sending
 * `POST /crawl` to receiving that job's CrawlRequested on the WebSocket feed, i.e. API → Kafka →
 * live subscription → socket. Prints the figures and a JSON line (also written to
 * bench-results/api-latency.json).
 *
 * Knobs: BENCH_CONNECTIONS (10), BENCH_SECONDS (10), BENCH_FEED_SAMPLES (200).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { WebSocket } from 'ws';
import { repoRoot } from '@trawl/streams';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const feedSamples = Number(process.env.BENCH_FEED_SAMPLES ?? 200);

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const server = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'bench-server.ts')], {
  cwd: join(import.meta.dirname, '..'),
  stdio: ['ignore', 'pipe', 'inherit'],
});
const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  createInterface({ input: server.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
});
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

try {
  // 1. POST /crawl under load.
  let n = 0;
  const load = await autocannon({
    url: `${url}/crawl`,
    method: 'POST',
    headers,
    connections,
    duration: seconds,
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ start_urls: [`http://127.0.0.1:8090/jobs?page=${++n}`], depth: 1, ignore_cache: true }) }) }],
  });
  const non2xx = load.non2xx + load.errors + load.timeouts;

  // 2. First live event after POST /crawl, one request at a time.
  const ws = new WebSocket(`${url.replace('http', 'ws')}/events?types=CrawlRequested`, { headers });
  const waiting = new Map<string, (at: number) => void>();
  const early = new Map<string, number>();
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as { type: string; job_id?: string };
    if (m.type !== 'event' || !m.job_id) return;
    const at = performance.now();
    const w = waiting.get(m.job_id);
    if (w) w(at);
    else early.set(m.job_id, at);
  });
  await new Promise((r) => ws.once('open', r));
  const feed: number[] = [];
  const posts: number[] = [];
  for (let i = 0; i < feedSamples; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/crawl`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ start_urls: [`http://127.0.0.1:8090/jobs?feed=${i}`], depth: 0, ignore_cache: true }),
    });
    const { job_id } = (await res.json()) as { job_id: string };
    posts.push(performance.now() - t0);
    const at = early.get(job_id) ?? (await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no live event for ${job_id} within 10 s`)), 10_000);
      waiting.set(job_id, (t) => {
        clearTimeout(timer);
        resolve(t);
      });
    }));
    feed.push(at - t0);
  }
  ws.close();
  feed.sort((a, b) => a - b);
  posts.sort((a, b) => a - b);

  const result = {
    machine: { node: process.version, cpus: (await import('node:os')).cpus().length },
    post_crawl_under_load: {
      tool: 'autocannon',
      connections,
      seconds,
      requests: load.requests.total,
      rps: Math.round(load.requests.average),
      non_2xx_or_errors: non2xx,
      p50_ms: load.latency.p50,
      p90_ms: load.latency.p90,
      p99_ms: load.latency.p99,
      max_ms: load.latency.max,
    },
    post_crawl_sequential: { samples: posts.length, p50_ms: +percentile(posts, 50).toFixed(2), p99_ms: +percentile(posts, 99).toFixed(2) },
    first_live_event: {
      samples: feed.length,
      p50_ms: +percentile(feed, 50).toFixed(2),
      p99_ms: +percentile(feed, 99).toFixed(2),
      max_ms: +feed[feed.length - 1]!.toFixed(2),
    },
  };
  const p = result.post_crawl_under_load;
  console.log(`POST /crawl under load (${connections} connections, ${seconds} s, every request a new job):`);
  console.log(`  ${p.requests} requests, ${p.rps} req/s, p50 ${p.p50_ms} ms, p90 ${p.p90_ms} ms, p99 ${p.p99_ms} ms, max ${p.max_ms} ms, non-2xx/errors ${p.non_2xx_or_errors}`);
  console.log(`POST /crawl one at a time: p50 ${result.post_crawl_sequential.p50_ms} ms, p99 ${result.post_crawl_sequential.p99_ms} ms`);
  console.log(`first live event after POST /crawl (${feed.length} samples): p50 ${result.first_live_event.p50_ms} ms, p99 ${result.first_live_event.p99_ms} ms, max ${result.first_live_event.max_ms} ms`);
  console.log(JSON.stringify(result));
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'api-latency.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}
