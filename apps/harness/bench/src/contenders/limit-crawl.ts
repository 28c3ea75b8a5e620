/**
 * The limit: the least a crawler must do per page, with no durability, no politeness and no
 * framework — undici keep-alive requests, htmlparser2 + cheerio, link extraction with the same
 * normalisation and host rule as Trawl, the same item selectors, `concurrency` pages in flight.
 * What no crawler on this machine can beat by much; Trawl's distance to it is the price of Kafka,
 * Postgres and the process boundaries.
 *
 * Run as a child of the bench (its own pid): reads its config as JSON from argv[2], prints
 * `{"phase":"started"}` then `{"phase":"done",…}` on stdout.
 */
import { Agent } from 'undici';
import { hostOf, normaliseUrlOrNull } from '@trawl/crawl';
import type { CrawlerConfig, CrawlerResult } from './crawler-config.ts';
import { limitParse } from './limit-parse.ts';

const config = JSON.parse(process.argv[2]!) as CrawlerConfig;
const allowedHosts = new Set(config.hosts);
const agent = new Agent({ connections: config.concurrency, keepAliveTimeout: 60_000, pipelining: 1 });

const seen = new Set<string>();
const queue: string[] = [];
let running = 0;
let pages = 0;
let failed = 0;
let items = 0;
let links = 0;

function enqueue(url: string | null): void {
  if (url === null || seen.has(url) || !allowedHosts.has(hostOf(url))) return;
  seen.add(url);
  queue.push(url);
}

async function fetchPage(url: string): Promise<string | null> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const u = new URL(url);
    const res = await agent.request({ origin: u.origin, path: u.pathname + u.search, method: 'GET', headers: { 'user-agent': 'bench-limit' } });
    const body = await res.body.text();
    if (res.statusCode === 200) return body;
    if (res.statusCode < 500 && res.statusCode !== 429) return null;
  }
  return null;
}

function parse(url: string, html: string): void {
  const page = limitParse(config, url, html);
  items += page.items.length;
  links += page.links.length;
  for (const link of page.links) enqueue(link);
}

function pump(done: () => void): void {
  while (running < config.concurrency && queue.length > 0) {
    const url = queue.shift()!;
    running++;
    fetchPage(url)
      .then((html) => {
        if (html === null) failed++;
        else {
          pages++;
          parse(url, html);
        }
      })
      .catch(() => failed++)
      .finally(() => {
        running--;
        if (running === 0 && queue.length === 0) done();
        else pump(done);
      });
  }
}

process.stdout.write(JSON.stringify({ phase: 'started' }) + '\n');
const started = performance.now();
const cpuBefore = process.cpuUsage();
enqueue(normaliseUrlOrNull(config.home));
await new Promise<void>((resolve) => pump(resolve));
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const result: CrawlerResult = { phase: 'done', pages, failed, items, links, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
process.stdout.write(JSON.stringify(result) + '\n');
await agent.close();
