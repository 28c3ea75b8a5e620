/**
 * `npm run bench`: Trawl's whole pipeline, Crawlee's CheerioCrawler and the bare limit on the same
 * site, at the same concurrency, interleaved round after round (the order rotates: ABC, BCA, CAB…)
 * so that whatever else the machine does hits all three alike. Figures on stdout, progress on
 * stderr, everything in bench-results/bench.json.
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { trawlHome } from '@trawl/streams';
import { optionsOrExit, parseBenchOptions, USAGE } from './bench-options.ts';
import { startSite, type SiteProcess } from './site/site-process.ts';
import { TrawlContender, availableProjectors, type TrawlRun } from './contenders/trawl-contender.ts';
import { runScriptContender, type ScriptRun } from './contenders/script-contender.ts';
import { machineCpuSeconds } from './measure/proc-stat.ts';
import { round } from './measure/process-sampler.ts';
import { ratio, spread, summarise, type ContenderSummary } from './report/summary.ts';
import { progress, say, table } from './report/print-table.ts';
import { writeResults } from './report/write-results.ts';

/** `round` counts from 1: the measured rounds, and apart from them the warm-up rounds (`warmup` set). */
type Run = (TrawlRun | ScriptRun) & { readonly round: number; readonly warmup: boolean; readonly machineBusy: number };

const options = optionsOrExit('npm run bench', USAGE, () => parseBenchOptions());
const { site: siteOptions, rounds, warmupRounds, concurrency, contenders } = options;
const startedAt = new Date();
say(`Trawl bench — ${siteOptions.pages} pages × ${siteOptions.links} links, ${siteOptions.items} items/page, ${siteOptions.hosts} host(s), concurrency ${concurrency}, ${rounds} round(s) after ${warmupRounds} warm-up round(s)`);
say(`machine: ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at start; node ${process.version}`);

const site: SiteProcess = await startSite({
  ...siteOptions,
  latencyMs: options.latencyMs,
  jitterMs: options.jitterMs,
  failRate: options.failRate,
  logFile: join(trawlHome(), 'logs', 'bench', 'site-server.log'),
});
progress(`site server pid ${site.pid} on ${site.hosts.join(', ')}`);

// Every Trawl contender is a pipeline of its own: the default settings, then each --variant.
const trawlSetups = [
  ...(contenders.includes('trawl') ? [{ label: 'trawl', env: {}, spec: {} }] : []),
  ...options.variants,
];
const names: string[] = [...trawlSetups.map((t) => t.label), ...contenders.filter((c) => c !== 'trawl')];
const trawls = new Map<string, TrawlContender>();
const allRuns: Run[] = [];
try {
  for (const t of trawlSetups) {
    progress(`starting a Trawl pipeline "${t.label}": 1 frontier, ${options.workers} worker(s), projectors: ${options.projectors ? availableProjectors().join(', ') || 'none exist yet' : 'off'}${Object.keys(t.env).length ? `, ${JSON.stringify(t.env)}` : ''}${Object.keys(t.spec).length ? `, spec ${JSON.stringify(t.spec)}` : ''}`);
    const trawl = await TrawlContender.start(site, {
      label: t.label,
      workers: options.workers,
      concurrency,
      eventPartitions: options.eventPartitions,
      fetchPartitions: options.fetchPartitions,
      projectors: options.projectors,
      env: t.env,
      spec: t.spec,
    });
    trawls.set(t.label, trawl);
    progress(`pipeline "${t.label}" ready (prefix ${trawl.pipeline.prefix})`);
  }
  // Warm-up rounds first, the same for every contender: they carry the JIT warm-up of the kept
  // pipeline's services and of the broker, and the machine's own (site server, caches, clocks);
  // Crawlee and the limit start a fresh process every round, warm-up or not. README: "Warm-up".
  for (let r = 0; r < warmupRounds + rounds; r++) {
    const warmup = r < warmupRounds;
    const label = warmup ? `warm-up ${r + 1}` : `round ${r - warmupRounds + 1}`;
    const order = names.map((_, i) => names[(i + r) % names.length]!);
    for (const name of order) {
      const cpuBefore = machineCpuSeconds();
      const trawl = trawls.get(name);
      const run = trawl
        ? await trawl.run(siteOptions.pages)
        : await runScriptContender(name as 'crawlee' | 'limit', site, { concurrency, crawleeAutoscale: options.crawleeAutoscale });
      const cpuAfter = machineCpuSeconds();
      const machineBusy = round((cpuAfter.busy - cpuBefore.busy) / Math.max(0.001, cpuAfter.total - cpuBefore.total), 2);
      allRuns.push({ ...run, round: warmup ? r + 1 : r - warmupRounds + 1, warmup, machineBusy });
      progress(`${label} ${name}: ${run.pages} pages in ${run.seconds} s = ${run.pagesPerSecond} pages/s (machine ${Math.round(machineBusy * 100)}% busy)`);
      if (run.pages !== siteOptions.pages) progress(`WARNING: ${name} fetched ${run.pages} of ${siteOptions.pages} pages`);
    }
  }
} finally {
  for (const trawl of trawls.values()) await trawl.stop();
  await site.close();
}

const runs = allRuns.filter((r) => !r.warmup);
const summaries = new Map<string, ContenderSummary>();
for (const c of names) summaries.set(c, summarise(c, runs.filter((r) => r.contender === c)));
const trawl = trawls.get('trawl');
const trawlRuns = runs.filter((r): r is TrawlRun & Run => r.contender === 'trawl');
const trawlExtra = trawlRuns.length
  ? {
      crawlSeconds: spread(trawlRuns.map((r) => r.crawlSeconds)),
      phases: {
        toFirstPageMs: spread(trawlRuns.map((r) => r.phases.toFirstPageMs ?? Number.NaN)),
        lastPageToCompletedMs: spread(trawlRuns.map((r) => r.phases.lastPageToCompletedMs ?? Number.NaN)),
        completedToCaughtUpMs: spread(trawlRuns.map((r) => r.phases.completedToCaughtUpMs)),
      },
      kafkaMessagesPerSecond: spread(trawlRuns.map((r) => r.kafkaMessagesPerSecond)),
      kafkaMessagesPerPage: round(trawlRuns[0]!.kafkaMessages / Math.max(1, trawlRuns[0]!.pages), 2),
      projectorLag: Object.fromEntries(
        Object.keys(trawlRuns[0]!.projectorLag).map((p) => [
          p,
          {
            eventsAtCompletion: spread(trawlRuns.map((r) => r.projectorLag[p]?.eventsAtCompletion ?? Number.NaN)),
            catchUpMs: spread(trawlRuns.map((r) => r.projectorLag[p]?.catchUpMs ?? Number.NaN)),
          },
        ]),
      ),
      projectors: trawl?.measuredProjectors ?? [],
      droppedProjectors: trawl?.dropped ?? [],
    }
  : undefined;
// The pace between each contender's first and last page: what is left of a ratio once start-up and tail are set aside.
const steady = new Map(names.map((c) => [c, spread(runs.filter((r) => r.contender === c).map((r) => r.phases.steadyPagesPerSecond ?? Number.NaN))]));
const ratios: Record<string, number | null> = {
  trawlOverCrawlee: ratio(summaries.get('trawl')?.pagesPerSecond, summaries.get('crawlee')?.pagesPerSecond),
  trawlOverLimit: ratio(summaries.get('trawl')?.pagesPerSecond, summaries.get('limit')?.pagesPerSecond),
  crawleeOverLimit: ratio(summaries.get('crawlee')?.pagesPerSecond, summaries.get('limit')?.pagesPerSecond),
  steadyTrawlOverLimit: ratio(steady.get('trawl'), steady.get('limit')),
};
for (const v of options.variants) {
  ratios[`trawlOver_${v.label}`] = ratio(summaries.get('trawl')?.pagesPerSecond, summaries.get(v.label)?.pagesPerSecond);
  ratios[`${v.label}_OverCrawlee`] = ratio(summaries.get(v.label)?.pagesPerSecond, summaries.get('crawlee')?.pagesPerSecond);
}

say();
say(
  table(
    ['round', 'contender', 'pages', 'seconds', 'pages/s', 'own CPU s', 'machine busy'],
    allRuns.map((r) => [
      r.warmup ? `w${r.round}` : r.round,
      r.contender,
      r.pages,
      r.seconds,
      r.pagesPerSecond,
      round(r.processes.filter((p) => !p.shared && p.label !== 'site server').reduce((a, p) => a + p.cpuSeconds, 0), 1),
      `${Math.round(r.machineBusy * 100)}%`,
    ]),
  ),
);
say();
say(
  table(
    ['contender', 'pages/s median', 'min', 'max', 'seconds median', 'own CPU s', 'CPU ms/page', 'first→last page, pages/s'],
    [...summaries.values()].map((s) => [s.contender, s.pagesPerSecond.median, s.pagesPerSecond.min, s.pagesPerSecond.max, s.seconds.median, s.ownCpuSeconds.median, s.cpuMsPerPage.median, steady.get(s.contender)?.median ?? '–']),
  ),
);
say();
if (warmupRounds > 0) say(`(medians over rounds 1–${rounds}; the warm-up round(s) w… are not counted)`);
say(`Trawl / Crawlee = ${ratios.trawlOverCrawlee ?? '–'} (target ≥ 2)    Trawl / limit = ${ratios.trawlOverLimit ?? '–'} (target ≥ 0.5)    Crawlee / limit = ${ratios.crawleeOverLimit ?? '–'}`);
for (const v of options.variants) say(`Trawl / ${v.label} = ${ratios[`trawlOver_${v.label}`] ?? '–'}    ${v.label} / Crawlee = ${ratios[`${v.label}_OverCrawlee`] ?? '–'}    (${JSON.stringify(v.env)})`);
say();
say('per process (median CPU s per round, highest peak RSS MB; "shared" = also serves the rest of the machine):');
say(
  table(
    ['contender', 'process', 'CPU s', 'peak RSS MB'],
    [...summaries.values()].flatMap((s) => Object.entries(s.processes).map(([label, p]) => [s.contender, p.shared ? `${label} (shared)` : label, p.cpuSeconds, p.peakRssMb])),
  ),
);
if (trawlExtra) {
  say();
  say(
    `Trawl phases (medians): dispatch → first page ${trawlExtra.phases.toFirstPageMs.median} ms; last page → JobCompleted ${trawlExtra.phases.lastPageToCompletedMs.median} ms; ` +
      `JobCompleted → projectors caught up ${trawlExtra.phases.completedToCaughtUpMs.median} ms; first → last page at Trawl / limit = ${ratios.steadyTrawlOverLimit ?? '–'}`,
  );
  say(`Trawl: JobCompleted after ${trawlExtra.crawlSeconds.median} s (median); Kafka ${trawlExtra.kafkaMessagesPerSecond.median} messages/s (${trawlExtra.kafkaMessagesPerPage} per page, fetch commands included)`);
  for (const d of trawlExtra.droppedProjectors) say(`Trawl: ${d.app} LEFT OUT: it ${d.reason}`);
  if (trawlExtra.projectors.length === 0) say('Trawl: no projector measured (none exists yet, none survived, or --no-projectors): the figure is dispatch → JobCompleted.');
  for (const [p, lag] of Object.entries(trawlExtra.projectorLag)) {
    say(`Trawl: ${p} lag at JobCompleted ${lag.eventsAtCompletion.median} events (median; max ${lag.eventsAtCompletion.max}), caught up ${lag.catchUpMs.median} ms later`);
  }
}
const file = writeResults(options.out ?? 'bench.json', {
  benchmark: 'trawl-vs-crawlee-vs-limit',
  startedAt,
  command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
  machine: { cores: cpus().length, loadAverageAtStart: loadavg(), node: process.version },
  options,
  ratios,
  summaries: Object.fromEntries(summaries),
  steadyPagesPerSecond: Object.fromEntries(steady),
  trawl: trawlExtra,
  runs: allRuns,
});
say();
say(`JSON: ${file}`);
