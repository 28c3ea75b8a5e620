/**
 * `npm run bench:scale -w @trawl/bench -- [--sections workers,size,browser] [--size-pages 10000]`
 *
 * How Trawl's cost grows, one fresh pipeline per configuration, one crawl each:
 *
 *  - workers: 1, 2 and 4 worker processes, on a one-host site and on a 16-host site. trawl.fetch
 *    is keyed by host, so a one-host crawl is one partition and one worker whatever the count;
 *    over 16 hosts (127.0.0.1…16, per-host concurrency 2, 32 in all) the partitions spread.
 *  - size: Trawl (and the limit, for reference) at --size-pages (default 10,000; 100,000 is the
 *    long run: `--sections size --size-pages 100000`) — pages/s, CPU per page, peak RSS per process.
 *  - browser: a small site whose listings and links are written by JavaScript, crawled with
 *    requires_browser: pages/s per Chromium (TRAWL_BROWSER_CONCURRENCY pages at once).
 *
 * Figures on stdout; bench-results/scale.json (merged with earlier sections).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, trawlHome } from '@trawl/streams';
import { startSite } from './site/site-process.ts';
import type { SiteOptions } from './site/site-model.ts';
import { TrawlContender, type TrawlRun, type TrawlSetup } from './contenders/trawl-contender.ts';
import { runScriptContender } from './contenders/script-contender.ts';
import { round, type GroupUsage } from './measure/process-sampler.ts';
import { progress, say, table } from './report/print-table.ts';
import { writeResults } from './report/write-results.ts';
import { optionsOrExit } from './bench-options.ts';

const USAGE = `options (all optional):
  --sections LIST         comma list of workers,size,browser (default all three)
  --size-pages N          pages of the size section (default 10000)
  --worker-pages N        pages of each workers run (default 5000)
  --browser-pages N       pages of the browser site (default 100); --browser-concurrency C (default 2)
  --concurrency C         pages in flight (default 32)
  --no-projectors         leave projector-pg/-ch out`;
const { values } = optionsOrExit('npm run bench:scale', USAGE, () => parseArgs({
  options: {
    sections: { type: 'string', default: 'workers,size,browser' },
    'size-pages': { type: 'string', default: '10000' },
    'worker-pages': { type: 'string', default: '5000' },
    'browser-pages': { type: 'string', default: '100' },
    'browser-concurrency': { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '32' },
    'no-projectors': { type: 'boolean' },
  },
}));
const sections = values.sections.split(',').map((s) => s.trim());
const concurrency = Number(values.concurrency);
const projectors = !values['no-projectors'];
const logFile = join(trawlHome(), 'logs', 'bench', 'site-server.log');

interface ScaleRow {
  readonly section: string;
  readonly config: string;
  readonly pages: number;
  readonly seconds: number;
  readonly pagesPerSecond: number;
  readonly cpuMsPerPage: Readonly<Record<string, number>>;
  readonly peakRssMb: Readonly<Record<string, number>>;
  readonly kafkaMessagesPerSecond?: number;
  readonly note?: string;
}

function perProcess(processes: readonly GroupUsage[], pages: number): Pick<ScaleRow, 'cpuMsPerPage' | 'peakRssMb'> {
  const cpu: Record<string, number> = {};
  const rss: Record<string, number> = {};
  for (const p of processes) {
    cpu[p.label] = round((p.cpuSeconds * 1000) / Math.max(1, pages), 2);
    rss[p.label] = p.peakRssMb;
  }
  return { cpuMsPerPage: cpu, peakRssMb: rss };
}

async function trawlOnce(site: Omit<SiteOptions, 'render'> & { render?: SiteOptions['render'] }, setup: Omit<TrawlSetup, 'eventPartitions' | 'fetchPartitions' | 'projectors'>): Promise<TrawlRun> {
  const server = await startSite({ render: 'html', ...site, logFile });
  try {
    const trawl = await TrawlContender.start(server, { eventPartitions: 6, fetchPartitions: 12, projectors, ...setup });
    try {
      return await trawl.run(site.pages, 120 * 60_000);
    } finally {
      await trawl.stop();
    }
  } finally {
    await server.close();
  }
}

const rows: ScaleRow[] = [];
const row = (section: string, config: string, run: TrawlRun, note?: string): ScaleRow => ({
  section,
  config,
  pages: run.pages,
  seconds: run.seconds,
  pagesPerSecond: run.pagesPerSecond,
  ...perProcess(run.processes, run.pages),
  kafkaMessagesPerSecond: run.kafkaMessagesPerSecond,
  ...(note ? { note } : {}),
});

if (sections.includes('workers')) {
  const pages = Number(values['worker-pages']);
  for (const [hosts, workers] of [[1, 1], [1, 2], [16, 1], [16, 2], [16, 4]] as const) {
    progress(`workers: ${workers} worker(s), ${hosts} host(s), ${pages} pages`);
    const run = await trawlOnce(
      { pages, links: 10, items: 10, hosts },
      { workers, concurrency, hostConcurrency: Math.max(1, Math.round(concurrency / hosts)) },
    );
    rows.push(row('workers', `${workers} worker(s), ${hosts} host(s)`, run));
    progress(`→ ${run.pagesPerSecond} pages/s`);
  }
}

if (sections.includes('size')) {
  const pages = Number(values['size-pages']);
  progress(`size: Trawl on ${pages} pages`);
  const run = await trawlOnce({ pages, links: 10, items: 10, hosts: 1 }, { workers: 1, concurrency });
  rows.push(row('size', `trawl, ${pages} pages`, run));
  progress(`→ ${run.pagesPerSecond} pages/s`);
  const server = await startSite({ pages, links: 10, items: 10, hosts: 1, render: 'html', logFile });
  try {
    const limit = await runScriptContender('limit', server, { concurrency });
    rows.push({ section: 'size', config: `limit, ${pages} pages`, pages: limit.pages, seconds: limit.seconds, pagesPerSecond: limit.pagesPerSecond, ...perProcess(limit.processes, limit.pages) });
  } finally {
    await server.close();
  }
}

if (sections.includes('browser')) {
  const pages = Number(values['browser-pages']);
  const browsers = Number(values['browser-concurrency']);
  progress(`browser: ${pages} JavaScript-rendered pages, ${browsers} Chromium page(s) at once`);
  const run = await trawlOnce(
    { pages, links: 10, items: 10, hosts: 1, render: 'js' },
    { workers: 1, concurrency, browser: true, env: { TRAWL_BROWSER_CONCURRENCY: String(browsers) } },
  );
  rows.push(row('browser', `1 Chromium, ${browsers} page(s) at once, ${pages} pages`, run, `${round(run.pagesPerSecond, 1)} pages/s per Chromium`));
  progress(`→ ${run.pagesPerSecond} pages/s`);
}

for (const section of ['workers', 'size', 'browser']) {
  const of = rows.filter((r) => r.section === section);
  if (of.length === 0) continue;
  const labels = [...new Set(of.flatMap((r) => Object.keys(r.cpuMsPerPage)))].filter((l) => !l.includes('shared'));
  say();
  say(`${section}:`);
  say(
    table(
      ['config', 'pages', 'seconds', 'pages/s', ...labels.map((l) => `${l} CPU ms/page`), ...labels.map((l) => `${l} RSS MB`)],
      of.map((r) => [r.config, r.pages, r.seconds, r.pagesPerSecond, ...labels.map((l) => r.cpuMsPerPage[l]), ...labels.map((l) => r.peakRssMb[l])]),
    ),
  );
}

const out = join(repoRoot, 'bench-results', 'scale.json');
const earlier = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { rows?: ScaleRow[] }).rows ?? [] : [];
const merged = [...earlier.filter((r) => !rows.some((n) => n.section === r.section && n.config === r.config)), ...rows];
const file = writeResults('scale.json', { command: `npm run bench:scale -w @trawl/bench -- ${process.argv.slice(2).join(' ')}`, at: new Date(), rows: merged });
say();
say(`JSON: ${file}`);
