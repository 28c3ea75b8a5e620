/**
 * The benchmark site as its own process, so that serving pages never shares an event loop with a
 * contender (and its CPU shows up on its own line).
 *
 *   npm run site -w @trawl/bench -- --pages 5000 --links 10 --items 10 [--hosts 1] [--latency-ms 0]
 *     [--jitter-ms 0] [--fail-rate 0] [--render html|js] [--port 0]
 *
 * Prints one JSON line `{"ready":true,"port":…,"home":…,"hosts":[…]}` on stdout once listening.
 * Keep-alive on (60 s), no compression (what is measured is the crawlers, not gzip).
 *
 * `--fail-rate r`: a deterministic fraction r of the pages answers 503 to its first request after
 * each reset, then 200 — every contender meets the same transient failures and, retrying, still
 * fetches every page. `/__bench/stats` (GET) and `/__bench/reset` (POST) count and reset requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { hostName, mix, pageHtml, pageOfRequest, ROBOTS_TXT, urlOf, type SiteOptions } from './site-model.ts';
import { emptySiteStats, TIMELINE_BUCKET_MS, type SiteStats } from './site-stats.ts';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '5000' },
    links: { type: 'string', default: '10' },
    items: { type: 'string', default: '10' },
    hosts: { type: 'string', default: '1' },
    'latency-ms': { type: 'string', default: '0' },
    'jitter-ms': { type: 'string', default: '0' },
    'fail-rate': { type: 'string', default: '0' },
    render: { type: 'string', default: 'html' },
    port: { type: 'string', default: '0' },
  },
});

const site: SiteOptions = {
  pages: Number(values.pages),
  links: Number(values.links),
  items: Number(values.items),
  hosts: Number(values.hosts),
  render: values.render === 'js' ? 'js' : 'html',
};
const latencyMs = Number(values['latency-ms']);
const jitterMs = Number(values['jitter-ms']);
const failRate = Number(values['fail-rate']);
if (!(site.pages >= 1 && site.links >= 1 && site.hosts >= 1 && site.hosts <= 250)) throw new Error('need pages ≥ 1, links ≥ 1, 1 ≤ hosts ≤ 250');

const stats: SiteStats = emptySiteStats();
const failedOnce = new Set<number>();
let port = 0;

/** Deterministic per page: the same pages fail (once) in every run. */
const failsFirst = (page: number) => failRate > 0 && mix(page * 2_654_435_761) / 2 ** 32 < failRate;
const delayFor = (page: number) => latencyMs + (jitterMs > 0 ? mix(page + 17) % (jitterMs + 1) : 0);

function send(res: ServerResponse, status: number, type: string, body: string): void {
  const buf = Buffer.from(body, 'utf8');
  stats.bytes += buf.length;
  res.writeHead(status, { 'content-type': type, 'content-length': String(buf.length) }).end(buf);
}

function handle(hostIndex: number, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0]!;
  if (path.startsWith('/__bench/')) return control(path, req, res);
  stats.requests++;
  const host = hostName(hostIndex);
  stats.byHost[host] = (stats.byHost[host] ?? 0) + 1;
  if (path === '/robots.txt') {
    stats.robots++;
    return send(res, 200, 'text/plain', ROBOTS_TXT);
  }
  const page = pageOfRequest(site, hostIndex, path);
  if (page === null) {
    stats.notFound++;
    return send(res, 404, 'text/html; charset=utf-8', '<!doctype html><p>not found</p>');
  }
  const answer = () => {
    if (res.destroyed) return;
    if (failsFirst(page) && !failedOnce.has(page)) {
      failedOnce.add(page);
      stats.failed++;
      res.setHeader('retry-after', '0');
      return send(res, 503, 'text/html; charset=utf-8', '<!doctype html><p>try again</p>');
    }
    stats.pages++;
    const now = Date.now();
    stats.firstPageAt ??= now;
    stats.lastPageAt = now;
    const bucket = Math.floor((now - stats.firstPageAt) / TIMELINE_BUCKET_MS);
    while (stats.timeline.length <= bucket) stats.timeline.push(0);
    stats.timeline[bucket]! += 1;
    send(res, 200, 'text/html; charset=utf-8', pageHtml(site, port, page));
  };
  const delay = delayFor(page);
  if (delay > 0) setTimeout(answer, delay);
  else answer();
}

function control(path: string, req: IncomingMessage, res: ServerResponse): void {
  if (path === '/__bench/stats') return send(res, 200, 'application/json', JSON.stringify(stats));
  if (path === '/__bench/reset' && req.method === 'POST') {
    Object.assign(stats, emptySiteStats());
    failedOnce.clear();
    return send(res, 200, 'application/json', '{"reset":true}');
  }
  send(res, 404, 'text/plain', 'unknown control path');
}

async function listen(hostIndex: number, wanted: number): Promise<number> {
  const server = createServer((req, res) => handle(hostIndex, req, res));
  // Crawlers keep connections open between requests; a short timeout would make them reconnect.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  server.on('connection', (s: Socket) => s.setNoDelay(true));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, hostName(hostIndex), () => resolve());
  });
  return (server.address() as { port: number }).port;
}

// Host 0 picks the port; the other hosts take the same one, so a page's URL differs by host only.
port = await listen(0, Number(values.port));
for (let h = 1; h < site.hosts; h++) await listen(h, port);
const hosts = Array.from({ length: site.hosts }, (_, h) => `${hostName(h)}:${port}`);
process.stdout.write(JSON.stringify({ ready: true, port, home: urlOf(site, port, 0), hosts, site }) + '\n');
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
