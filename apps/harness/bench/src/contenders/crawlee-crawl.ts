/**
 * Crawlee's CheerioCrawler, as its documentation writes it, on the bench site: in-memory storage
 * (nothing persisted), `maxConcurrency` = the bench's concurrency, links by `enqueueLinks` kept to
 * the site's hosts, the same item selectors, items into the (in-memory) dataset with `pushData`.
 *
 * `minConcurrency` is set to the same value: Crawlee's autoscaled pool otherwise starts low and
 * grows only while its CPU and event-loop probes say the machine has room, which on a busy
 * 2-core box it rarely does. Pinning it gives Crawlee its best case at that concurrency — the fair
 * opponent for a "2× Crawlee" target. `--crawlee-autoscale` in the bench leaves it to Crawlee.
 *
 * Run as a child of the bench (its own pid): config as JSON in argv[2]; prints `{"phase":"started"}`
 * then `{"phase":"done",…}` on stdout.
 */
import { CheerioCrawler, Configuration, log, LogLevel } from 'crawlee';
import type { CrawlerConfig, CrawlerResult } from './crawler-config.ts';

const config = JSON.parse(process.argv[2]!) as CrawlerConfig & { readonly autoscale?: boolean };
const allowedHosts = new Set(config.hosts);
log.setLevel(LogLevel.WARNING);

let pages = 0;
let failed = 0;
let items = 0;
let links = 0;

const crawler = new CheerioCrawler(
  {
    maxConcurrency: config.concurrency,
    ...(config.autoscale ? {} : { minConcurrency: config.concurrency }),
    maxRequestRetries: 3,
    requestHandlerTimeoutSecs: 60,
    async requestHandler({ $, enqueueLinks, pushData }) {
      pages++;
      const found: Record<string, string>[] = [];
      $(config.itemRoot).each((_, el) => {
        const root = $(el);
        const fields: Record<string, string> = {};
        for (const f of config.itemFields) {
          const node = root.find(f.selector).first();
          const value = f.attribute ? node.attr(f.attribute) : node.text().trim();
          if (value !== undefined) fields[f.name] = value;
        }
        if (Object.keys(fields).length > 0) found.push(fields);
      });
      items += found.length;
      links += $('a[href]').length;
      await pushData(found);
      await enqueueLinks({
        // 'all' + a host filter: the same host rule as Trawl's allowed_hosts, for one host or many.
        strategy: 'all',
        transformRequestFunction: (req) => (allowedHosts.has(new URL(req.url).host) ? req : false),
      });
    },
    failedRequestHandler() {
      failed++;
    },
  },
  new Configuration({ persistStorage: false, purgeOnStart: true }),
);

process.stdout.write(JSON.stringify({ phase: 'started' }) + '\n');
const started = performance.now();
const cpuBefore = process.cpuUsage();
await crawler.run([config.home]);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const result: CrawlerResult = { phase: 'done', pages, failed, items, links, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
process.stdout.write(JSON.stringify(result) + '\n');
process.exit(0);
