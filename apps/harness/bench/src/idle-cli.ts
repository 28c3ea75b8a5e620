/**
 * `npm run bench:idle [-- --idle-seconds 60 --settle-seconds 10 --crawls 3]`
 *
 * Whether an idle stack rests (issue 37, item 2). The nine services of `npm start` — projector-pg,
 * projector-ch, webhooks, dispatcher, frontier, two workers, the API and the demo job board — start
 * as compiled child processes on the local stack, with topics, database and ClickHouse database of
 * their own (`@trawl/e2e`'s Pipeline), so nothing of a running `npm start` or of anyone's test is
 * touched. The demo crawl runs through the API as `npm start` runs it (the board as a website, depth
 * 2, spider), `--crawls` times; then nothing happens for `--settle-seconds`, and over the next
 * `--idle-seconds` the CPU of every process (utime + stime from /proc/<pid>/stat) is summed: each
 * service, their total, this pipeline's Postgres backends, the broker. `--wakes` crawls follow the
 * window, each after `--wake-rest-seconds` of quiet, so a consumer that rests too deeply shows as
 * a slow reaction or a slow tail.
 *
 * Targets: all services together ≤ 2% of one core, the broker ≤ 3%. The broker is shared with
 * whatever else runs on the stack, so between slices of the window the services are stopped
 * (SIGSTOP, `--frozen-seconds` in all) and the broker is measured alone: the difference is what
 * this stack's clients cost it. That reading, the wake-ups a second of every process (context
 * switches of all its threads) and the load average are printed beside the figures.
 *
 * Latency of each crawl, from the Kafka records' timestamps (each set by its producer as it sends;
 * one machine, one clock): the API's answer → JobDispatched → the frontier's first FetchRequested →
 * a worker's first PageFetched (the reaction of resting consumers), and the tail, the last
 * PageFetched → JobCompleted.
 *
 * Exits 0 only at target. Figures on stdout, one JSON line last; bench-results/idle.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { endpoints, httpTarget, readEvents, repoRoot, trawlHome, type LoggedEvent } from '@trawl/streams';
import { compileApp } from '@trawl/streams/build';
import { JOB_BOARD_SPEC } from '@trawl/demo-site';
import { Pipeline, apiClient, until, type Api, type AppName } from '@trawl/e2e';
import { contextSwitches, findPids, sampleProc } from './measure/proc-stat.ts';
import { kafkaBrokerPid } from './measure/stack-pids.ts';
import { onInterrupt } from './measure/on-interrupt.ts';
import { round } from './measure/process-sampler.ts';
import { profileWindow } from './profile/window-profile.ts';
import { progress, say, table } from './report/print-table.ts';
import { writeResults } from './report/write-results.ts';
import { optionsOrExit } from './bench-options.ts';

const USAGE = `options (all optional):
  --idle-seconds N        the idle window measured (default 60)
  --settle-seconds N      quiet time after the last crawl before the window (default 10)
  --frozen-seconds N      the services stopped (SIGSTOP) this long in all, in 6 slices between the
                          window's, while the broker is measured alone: other clients' share of a
                          shared broker (default 30; 0: off)
  --baseline-seconds N    the broker measured before this pipeline starts (default 0: skip)
  --crawls N              demo crawls before the idle window (default 3)
  --wakes N               crawls after the window, each after --wake-rest-seconds of quiet (default 3)
  --wake-rest-seconds N   the quiet before each of them (default 20: fetches at their longest rest)
  --workers N             worker processes (default 2, as npm start)
  --env K=V[,K=V]         extra environment for every service (A/B of a setting)
  --services-target PCT   all services together, % of one core (default 2)
  --broker-target PCT     the broker, % of one core (default 3)
  --cpu-prof              every service under node --cpu-prof: where the idle window's CPU went
                          (per process, hottest functions; no wake-up crawl, the services stop
                          right after the window so that they write their profiles)`;
const { values } = optionsOrExit('npm run bench:idle', USAGE, () =>
  parseArgs({
    options: {
      'idle-seconds': { type: 'string', default: '60' },
      'settle-seconds': { type: 'string', default: '10' },
      'baseline-seconds': { type: 'string', default: '0' },
      'frozen-seconds': { type: 'string', default: '30' },
      crawls: { type: 'string', default: '3' },
      wakes: { type: 'string', default: '3' },
      'wake-rest-seconds': { type: 'string', default: '20' },
      workers: { type: 'string', default: '2' },
      env: { type: 'string', default: '' },
      'services-target': { type: 'string', default: '2' },
      'broker-target': { type: 'string', default: '3' },
      'cpu-prof': { type: 'boolean', default: false },
    },
  }),
);
const idleSeconds = Number(values['idle-seconds']);
const settleSeconds = Number(values['settle-seconds']);
const baselineSeconds = Number(values['baseline-seconds']);
const frozenSeconds = Number(values['frozen-seconds']);
const crawls = Number(values.crawls);
const wakes = Number(values.wakes);
const wakeRestSeconds = Number(values['wake-rest-seconds']);
const workers = Number(values.workers);
const servicesTarget = Number(values['services-target']);
const brokerTarget = Number(values['broker-target']);
const cpuProf = values['cpu-prof'];
if (![idleSeconds, crawls, workers].every((n) => Number.isInteger(n) && n >= 1) || ![settleSeconds, baselineSeconds, frozenSeconds, wakes, wakeRestSeconds].every((n) => Number.isInteger(n) && n >= 0)) {
  process.stderr.write(`every count must be a whole number (idle, crawls, workers ≥ 1)\n${USAGE}\n`);
  process.exit(2);
}
const extraEnv: Record<string, string> = {};
for (const pair of values.env.split(',').filter((p) => p.trim() !== '')) {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw new Error(`--env wants K=V pairs, got "${pair}"`);
  extraEnv[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
}

const SERVICES: readonly AppName[] = ['projector-pg', 'projector-ch', 'webhooks', 'dispatcher', 'frontier', 'worker', 'api'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loads = () => loadavg().map((l) => round(l, 2));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

interface Watched {
  readonly label: string;
  readonly pids: () => readonly number[];
  readonly service: boolean;
}

interface IdleRow {
  readonly label: string;
  readonly cpuSeconds: number;
  /** Share of one core over the window, %. */
  readonly percentOfCore: number;
  /** Context switches of all its threads a second: how often it woke up. */
  readonly wakeupsPerSecond: number;
  readonly rssMb: number;
  readonly service: boolean;
}

interface Reading {
  readonly cpu: number;
  readonly switches: number;
}

function read(g: Watched): Reading {
  let cpu = 0;
  let switches = 0;
  for (const pid of g.pids()) {
    cpu += sampleProc(pid)?.cpuSeconds ?? 0;
    switches += contextSwitches(pid);
  }
  return { cpu, switches };
}

/**
 * CPU seconds and wake-ups each watched group spends over `seconds` (first and last /proc
 * readings). With `freeze`, the window is cut into `slices`, and after each the services are
 * stopped (SIGSTOP) for `frozenSeconds` while the other groups (the broker, Postgres) are measured
 * alone: what they spend then is other clients' work on a shared stack, read beside the window.
 */
async function measureIdle(
  groups: readonly Watched[],
  seconds: number,
  freeze?: { readonly pids: () => readonly number[]; readonly slices: number; readonly frozenSeconds: number },
): Promise<{ rows: IdleRow[]; frozen: IdleRow[] | null }> {
  const used = groups.map(() => ({ cpu: 0, switches: 0 }));
  const frozenUsed = groups.map(() => ({ cpu: 0, switches: 0 }));
  const slices = freeze?.slices ?? 1;
  let elapsed = 0;
  let frozenElapsed = 0;
  const span = async (ms: number, into: { cpu: number; switches: number }[], which: (g: Watched) => boolean) => {
    const before = groups.map(read);
    const started = performance.now();
    await sleep(ms);
    const took = (performance.now() - started) / 1000;
    groups.forEach((g, i) => {
      if (!which(g)) return;
      const after = read(g);
      into[i]!.cpu += after.cpu - before[i]!.cpu;
      into[i]!.switches += after.switches - before[i]!.switches;
    });
    return took;
  };
  for (let s = 0; s < slices; s++) {
    elapsed += await span((seconds * 1000) / slices, used, () => true);
    if (!freeze) continue;
    const pids = freeze.pids();
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    try {
      frozenElapsed += await span((freeze.frozenSeconds * 1000) / slices, frozenUsed, (g) => !g.service);
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
    }
  }
  const row = (g: Watched, u: { cpu: number; switches: number }, over: number): IdleRow => ({
    label: g.label,
    cpuSeconds: round(u.cpu, 2),
    percentOfCore: round((100 * u.cpu) / over, 2),
    wakeupsPerSecond: round(u.switches / over, 1),
    rssMb: round(g.pids().reduce((sum, pid) => sum + (sampleProc(pid)?.rssMb ?? 0), 0), 0),
    service: g.service,
  });
  return {
    rows: groups.map((g, i) => row(g, used[i]!, elapsed)),
    frozen: freeze ? groups.flatMap((g, i) => (g.service ? [] : [row(g, frozenUsed[i]!, frozenElapsed)])) : null,
  };
}

interface CrawlTimes {
  readonly jobId: string;
  readonly pages: number;
  /** The API's answer to POST /crawl → JobDispatched on the log (negative: produced before the answer). */
  readonly answerToDispatchedMs: number | null;
  /** JobDispatched → the frontier's first FetchRequested. */
  readonly dispatchedToFirstRequestMs: number | null;
  /** The first FetchRequested → a worker's first PageFetched (the fetch itself included). */
  readonly firstRequestToFirstPageMs: number | null;
  /** The last PageFetched → JobCompleted: the tail. */
  readonly lastPageToCompletedMs: number | null;
  /** The API's answer → JobCompleted. */
  readonly totalMs: number | null;
}

function crawlTimes(events: readonly LoggedEvent[], jobId: string, answeredAt: number): CrawlTimes {
  const mine = events.filter((e) => (e.event.value as { job_id?: string }).job_id === jobId);
  const at = (name: string) => mine.filter((e) => e.event.name === name).map((e) => Number(e.timestamp));
  const first = (xs: number[]) => (xs.length > 0 ? Math.min(...xs) : null);
  const last = (xs: number[]) => (xs.length > 0 ? Math.max(...xs) : null);
  const dispatched = first(at('JobDispatched'));
  const firstRequest = first(at('FetchRequested'));
  const pages = at('PageFetched');
  const completed = first(at('JobCompleted'));
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  return {
    jobId,
    pages: pages.length,
    answerToDispatchedMs: diff(answeredAt, dispatched),
    dispatchedToFirstRequestMs: diff(dispatched, firstRequest),
    firstRequestToFirstPageMs: diff(firstRequest, first(pages)),
    lastPageToCompletedMs: diff(last(pages), completed),
    totalMs: diff(answeredAt, completed),
  };
}

const median = (xs: readonly number[]) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// ---------------------------------------------------------------------------------------------

say(`bench:idle — ${cpus().length} cores, node ${process.version}, load average ${loads().join(' ')} at start`);
const brokerPid = kafkaBrokerPid();
let baseline: IdleRow | null = null;
if (baselineSeconds > 0 && brokerPid !== null) {
  progress(`the broker before this pipeline exists, ${baselineSeconds} s`);
  baseline = (await measureIdle([{ label: 'kafka broker (before)', pids: () => [brokerPid], service: false }], baselineSeconds)).rows[0] ?? null;
}
const loadBefore = loads();

const clickhouseDatabase = `trawl_idle_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
const profileDir = join(trawlHome(), 'profiles', `idle-${Date.now()}`);
const pipeline = await Pipeline.start({
  env: { CLICKHOUSE_DATABASE: clickhouseDatabase, TRAWL_LOG_LEVEL: 'info', ...extraEnv },
  ...(cpuProf ? { cpuProfile: SERVICES, cpuProfileDir: profileDir } : {}),
});
let demoSite: ChildProcess | undefined;
const stopAll = async () => {
  demoSite?.kill('SIGKILL');
  await pipeline.stop();
  const ch = httpTarget(endpoints().clickhouseUrl);
  await fetch(ch.url, { method: 'POST', body: `DROP DATABASE IF EXISTS ${clickhouseDatabase}`, headers: ch.authorization ? { authorization: ch.authorization } : {} }).catch(() => undefined);
};
const forget = onInterrupt(stopAll);

let exitCode = 1;
try {
  const apiPort = await freePort();
  const demoPort = await freePort();
  const base = `http://127.0.0.1:${apiPort}`;
  // The demo board as `trawl up` runs it: a compiled process of its own.
  const demoMain = (await compileApp('demo-site')).main;
  const logDir = join(trawlHome(), 'logs', 'bench');
  mkdirSync(logDir, { recursive: true });
  demoSite = spawn(process.execPath, [demoMain], { cwd: repoRoot, env: { ...process.env, TRAWL_DEMO_PORT: String(demoPort), TRAWL_DEMO_HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const demoLog = createWriteStream(join(logDir, `${pipeline.prefix}demo-site.log`));
  demoSite.stdout!.pipe(demoLog);
  demoSite.stderr!.pipe(demoLog);

  // `trawl up`'s order: the read models' consumers, then the pipeline, then the API.
  for (const app of ['projector-pg', 'projector-ch', 'webhooks', 'dispatcher', 'frontier'] as const) pipeline.spawn(app);
  for (let i = 0; i < workers; i++) pipeline.spawn('worker', { TRAWL_WORKER_INSTANCE: String(i + 1) });
  pipeline.spawn('api', { TRAWL_API_HOST: '127.0.0.1', TRAWL_API_PORT: String(apiPort) });
  await pipeline.groupSettled('trawl-worker', workers);
  await until(() => fetch(`${base}/readyz`).then((r) => r.ok).catch(() => false), (ok) => ok, 120_000, 'the API ready', pipeline);
  const demoUrl = `http://127.0.0.1:${demoPort}/jobs?page=1`;
  await until(() => fetch(demoUrl).then((r) => r.ok).catch(() => false), (ok) => ok, 30_000, 'the demo site', pipeline);

  const api: Api = apiClient(base, await pipeline.createKey('demo'));
  // The API learns of a new key by a Postgres notification, milliseconds after its commit.
  await until(() => api('GET', '/jobs?limit=1').then((r) => r.status), (s) => s === 200, 10_000, 'the key accepted', pipeline, 50);
  const website = await api('PUT', '/websites/demo-job-board', {
    name: 'Demo job board',
    base_url: new URL('/', demoUrl).href,
    max_depth: 2,
    ...JOB_BOARD_SPEC,
  });
  if (website.status >= 300) throw new Error(`PUT /websites/demo-job-board: ${website.status} ${JSON.stringify(website.body)}`);

  const crawl = async (): Promise<CrawlTimes> => {
    const res = await api('POST', '/crawl', { start_urls: [demoUrl], depth: 2, spider: 'demo-job-board', ignore_cache: true });
    const answeredAt = Date.now();
    if (res.status >= 300) throw new Error(`POST /crawl: ${res.status} ${JSON.stringify(res.body)}`);
    const jobId = res.body.job_id as string;
    const events = await pipeline.waitFor((es) => es.some((e) => e.event.name === 'JobCompleted' && (e.event.value as { job_id: string }).job_id === jobId), 120_000, `JobCompleted of ${jobId}`);
    const all = await readEvents(pipeline.kafka, pipeline.codec, [...pipeline.topics.events, pipeline.topics.fetch]);
    return crawlTimes(all.length >= events.length ? all : events, jobId, answeredAt);
  };

  const before: CrawlTimes[] = [];
  for (let i = 0; i < crawls; i++) {
    progress(`demo crawl ${i + 1}/${crawls}`);
    before.push(await crawl());
  }

  const groups: Watched[] = pipeline.children.map((c) => {
    const sameApp = pipeline.children.filter((x) => x.app === c.app);
    const label = sameApp.length > 1 ? `${c.app}-${sameApp.indexOf(c) + 1}` : c.app;
    return { label, pids: () => [c.process.pid!], service: true };
  });
  groups.push({ label: 'demo-site', pids: () => [demoSite!.pid!], service: true });
  const dbName = new URL(pipeline.db.url).pathname.slice(1);
  groups.push({ label: 'postgres (this db)', pids: () => findPids(` ${dbName} `), service: false });
  if (brokerPid !== null) groups.push({ label: 'kafka broker (shared)', pids: () => [brokerPid], service: false });

  progress(`settling ${settleSeconds} s, then measuring ${idleSeconds} s of idle`);
  await sleep(settleSeconds * 1000);
  const loadAtIdle = loads();
  const windowFromUs = Number(process.hrtime.bigint() / 1000n);
  const servicePids = () => [...pipeline.children.map((c) => c.process.pid!), demoSite!.pid!];
  const { rows, frozen } = await measureIdle(groups, idleSeconds, frozenSeconds > 0 ? { pids: servicePids, slices: 6, frozenSeconds } : undefined);
  const windowToUs = Number(process.hrtime.bigint() / 1000n);
  const loadAfterIdle = loads();
  pipeline.checkChildren();

  const wake: CrawlTimes[] = [];
  if (cpuProf) {
    progress(`stopping the services for their profiles (${profileDir})`);
    await Promise.all(pipeline.children.map((c) => pipeline.terminate(c)));
    for (const c of pipeline.children) {
      const dir = join(profileDir, `${c.app}-${pipeline.children.indexOf(c)}`);
      const main = readdirSync(dir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
      if (!main) continue;
      const w = profileWindow(join(dir, main), windowFromUs, windowToUs);
      say(`\n${c.app}-${pipeline.children.indexOf(c)}: ${w.busyMs} ms sampled busy in the window`);
      say(table(['self', 'ms'], w.self.map((f) => [f.name, f.ms])));
      say(table(['inclusive', 'ms'], w.inclusive.map((f) => [f.name, f.ms])));
    }
  } else {
    for (let i = 0; i < wakes; i++) {
      if (i > 0) {
        progress(`quiet for ${wakeRestSeconds} s`);
        await sleep(wakeRestSeconds * 1000);
      }
      progress(`a crawl after the quiet (wake-up ${i + 1}/${wakes})`);
      wake.push(await crawl());
    }
  }

  const services = rows.filter((r) => r.service);
  const servicesPercent = round(services.reduce((s, r) => s + r.percentOfCore, 0), 2);
  const brokerRow = rows.find((r) => r.label.startsWith('kafka broker'));
  const brokerPercent = brokerRow?.percentOfCore ?? null;
  const brokerFrozen = frozen?.find((r) => r.label.startsWith('kafka broker'))?.percentOfCore ?? null;
  const brokerOwn = brokerPercent !== null && brokerFrozen !== null ? round(brokerPercent - brokerFrozen, 2) : null;
  const servicesOk = servicesPercent <= servicesTarget;
  const brokerOk = brokerPercent !== null && brokerPercent <= brokerTarget;

  say('');
  say(`idle ${idleSeconds} s after ${settleSeconds} s of quiet (load average ${loadAtIdle.join(' ')} → ${loadAfterIdle.join(' ')})`);
  say(
    table(
      ['process', 'CPU s', '% of a core', 'wake-ups/s', 'RSS MB'],
      [
        ...rows.map((r) => [r.label, r.cpuSeconds, r.percentOfCore, r.wakeupsPerSecond, r.rssMb]),
        ['all services', round(services.reduce((s, r) => s + r.cpuSeconds, 0), 2), servicesPercent, round(services.reduce((s, r) => s + r.wakeupsPerSecond, 0), 1), round(services.reduce((s, r) => s + r.rssMb, 0), 0)],
      ],
    ),
  );
  if (frozen) {
    say(`with the services stopped (SIGSTOP, ${frozenSeconds} s in 6 slices between the window's): ${frozen.map((r) => `${r.label} ${r.percentOfCore}%`).join(', ')}`);
    if (brokerOwn !== null) say(`the broker's share that this stack's clients cause: ${brokerPercent}% − ${brokerFrozen}% = ${brokerOwn}% of a core`);
  }
  if (baseline) say(`broker before this pipeline existed: ${baseline.percentOfCore}% of a core over ${baselineSeconds} s (load average ${loadBefore.join(' ')})`);
  say('');
  const crawlRows = [...before.map((c, i) => ({ name: `crawl ${i + 1}`, c })), ...wake.map((c, i) => ({ name: `after quiet ${i + 1}`, c }))];
  say('demo crawls (ms, from the records\' timestamps)');
  say(
    table(
      ['crawl', 'pages', 'answer→dispatched', 'dispatched→1st request', '1st request→1st page', 'last page→completed', 'answer→completed'],
      crawlRows.map(({ name, c }) => [name, c.pages, c.answerToDispatchedMs, c.dispatchedToFirstRequestMs, c.firstRequestToFirstPageMs, c.lastPageToCompletedMs, c.totalMs]),
    ),
  );
  const tails = before.map((c) => c.lastPageToCompletedMs).filter((x): x is number => x !== null);
  const medianTail = median(tails);
  const wakeMedian = (f: (c: CrawlTimes) => number | null) => median(wake.map(f).filter((x): x is number => x !== null));
  const wakeTail = wakeMedian((c) => c.lastPageToCompletedMs);
  const wakeReaction = wakeMedian((c) => (c.dispatchedToFirstRequestMs === null || c.firstRequestToFirstPageMs === null ? null : c.dispatchedToFirstRequestMs + c.firstRequestToFirstPageMs));
  say(`tail (last page → JobCompleted): median ${medianTail ?? '–'} ms over ${tails.length} crawls in a row; ${wakeTail ?? '–'} ms over ${wake.length} after quiet`);
  say(`reaction after quiet (JobDispatched → first page fetched): median ${wakeReaction ?? '–'} ms`);
  say('');
  say(`target: all services ≤ ${servicesTarget}% of one core: ${servicesPercent}% ${servicesOk ? 'MET' : 'NOT MET'}`);
  say(
    `target: the broker ≤ ${brokerTarget}% of one core: ${brokerPercent ?? '–'}% ${brokerOk ? 'MET' : 'NOT MET'}` +
      (!brokerOk && brokerOwn !== null && brokerOwn <= brokerTarget ? ` (this stack's share ${brokerOwn}% is within it: the rest is other clients of the shared broker)` : ''),
  );

  const result = {
    bench: 'idle',
    at: new Date().toISOString(),
    machine: { cores: cpus().length, node: process.version, loadAverageAtIdle: loadAtIdle, loadAverageAfterIdle: loadAfterIdle },
    idleSeconds,
    settleSeconds,
    env: extraEnv,
    processes: rows,
    servicesPercentOfCore: servicesPercent,
    brokerPercentOfCore: brokerPercent,
    brokerBeforePercentOfCore: baseline?.percentOfCore ?? null,
    frozen,
    brokerFrozenPercentOfCore: brokerFrozen,
    brokerOwnPercentOfCore: brokerOwn,
    crawls: before,
    wake,
    medianTailMs: medianTail,
    wakeMedianTailMs: wakeTail,
    wakeMedianReactionMs: wakeReaction,
    targets: { servicesPercentOfCore: servicesTarget, brokerPercentOfCore: brokerTarget, met: servicesOk && brokerOk },
  };
  const file = writeResults('idle.json', result);
  say(`results: ${file}`);
  say(JSON.stringify(result));
  exitCode = servicesOk && brokerOk ? 0 : 1;
} finally {
  forget();
  await stopAll();
}
process.exit(exitCode);
