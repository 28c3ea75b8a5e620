/**
 * `npm run bench:profile -w @trawl/bench -- [--pages 5000] [--apps frontier,worker,projector-pg] [--label before]`
 *
 * One Trawl crawl of the bench site with the chosen services under `node --cpu-prof` (the
 * Pipeline's TRAWL_CPU_PROF knob), stopped gracefully so the profiles are written, then summarised:
 * per process, CPU per page by category (fetch, parse, encode, Kafka, frontier, Postgres…) and the
 * hottest functions. Profiles land in bench-results/profiles/<label>/ (open them in Chrome
 * DevTools or speedscope); the summary in bench-results/profile-<label>.json.
 *
 * A profile spans the process's whole life: start-up (loading modules) shows as its own
 * category and is left out of the per-page figures, which divide the rest by the pages crawled
 * (the round's plus the 20-page warm-up). `--variant label:SETTINGS` (as for `npm run bench`)
 * profiles a pipeline with those settings instead of the default one.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, trawlHome } from '@trawl/streams';
import type { AppName } from '@trawl/e2e';
import { optionsOrExit, parseBenchOptions, USAGE } from './bench-options.ts';
import { startSite } from './site/site-process.ts';
import { TrawlContender } from './contenders/trawl-contender.ts';
import { summariseProfile, type ProfileSummary } from './profile/summarise-profile.ts';
import { progress, say, table } from './report/print-table.ts';
import { writeResults } from './report/write-results.ts';

const argv = process.argv.slice(2);
const own = parseArgs({ args: argv, strict: false, options: { apps: { type: 'string', default: 'frontier,worker,projector-pg' }, label: { type: 'string', default: 'latest' }, resummarise: { type: 'boolean' } } }).values;
const rest = dropOwn(argv, ['--apps', '--label']).filter((a) => a !== '--resummarise');
// --resummarise: no crawl, only summarise the profiles of an earlier run of this label again.
const resummarise = own.resummarise === true;
const options = optionsOrExit('npm run bench:profile', `  --apps LIST          services to profile (default frontier,worker,projector-pg)\n  --label L            where the profiles go (default latest); --resummarise: summarise them again\n${USAGE}`, () => parseBenchOptions(rest));
const apps = String(own.apps).split(',').map((a) => a.trim()) as AppName[];
const label = String(own.label);
const dir = join(repoRoot, 'bench-results', 'profiles', label);
const run = resummarise ? previousRun() : await profiledCrawl();

async function profiledCrawl(): Promise<{ pages: number; pagesPerSecond: number }> {
  rmSync(dir, { recursive: true, force: true });
  const site = await startSite({ ...options.site, latencyMs: options.latencyMs, failRate: options.failRate, logFile: join(trawlHome(), 'logs', 'bench', 'site-server.log') });
  const trawl = await TrawlContender.start(site, {
    workers: options.workers,
    concurrency: options.concurrency,
    eventPartitions: options.eventPartitions,
    fetchPartitions: options.fetchPartitions,
    projectors: options.projectors,
    cpuProfile: apps,
    cpuProfileDir: dir,
    // The first --variant's settings, to profile a pipeline other than the default one.
    ...(options.variants[0] ? { env: options.variants[0].env, spec: options.variants[0].spec } : {}),
  });
  try {
    progress(`profiling ${apps.join(', ')}; crawling ${options.site.pages} pages`);
    const result = await trawl.run(options.site.pages);
    progress(`${result.pages} pages in ${result.seconds} s = ${result.pagesPerSecond} pages/s`);
    return result;
  } finally {
    await trawl.stop();
    await site.close();
  }
}

function previousRun(): { pages: number; pagesPerSecond: number } {
  const file = join(repoRoot, 'bench-results', `profile-${label}.json`);
  return (JSON.parse(readFileSync(file, 'utf8')) as { run: { pages: number; pagesPerSecond: number } }).run;
}

const pages = run.pages + 20;
const summaries: (ProfileSummary & { app: string; msPerPage: number })[] = [];
for (const child of readdirSync(dir).sort()) {
  // The main thread's profile (tid 0); the others are tsx's loader thread.
  const main = readdirSync(join(dir, child)).find((n) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(n));
  if (!main) continue;
  const s = summariseProfile(join(dir, child, main));
  const startup = s.categories.find((c) => c.category.startsWith('startup'))?.ms ?? 0;
  summaries.push({ ...s, app: child, msPerPage: Math.round(((s.busyMs - startup) / pages) * 1000) / 1000 });
}

say(`profile "${label}": ${run.pages} pages, ${run.pagesPerSecond} pages/s (profiling costs a few %)`);
for (const s of summaries) {
  say();
  say(`${s.app}: ${s.busyMs} ms busy of ${s.wallMs} ms, ${s.msPerPage} ms CPU per page (start-up excluded)`);
  say(table(['category', 'ms', '%', 'µs/page'], s.categories.slice(0, 14).map((c) => [c.category, c.ms, c.share, Math.round((c.ms * 1000) / pages)])));
  say();
  say(table(['function', 'where', 'ms', '%'], s.topFunctions.slice(0, 15).map((f) => [f.fn.slice(0, 40), f.where.slice(-60), f.ms, f.share])));
}
const file = writeResults(`profile-${label}.json`, { label, command: `npm run bench:profile -w @trawl/bench -- ${argv.join(' ')}`, run, profiles: summaries, dir });
say();
say(`JSON: ${file}; profiles: ${dir}`);

function dropOwn(args: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (names.includes(a)) i++;
    else if (!names.some((n) => a.startsWith(`${n}=`))) out.push(a);
  }
  return out;
}
