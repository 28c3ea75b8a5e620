/**
 * `npm run soak -- --minutes 60 [--seed N] [--brokers 3|1] [--faults KIND,…] [--json FILE] [--keep] [--sabotage]`:
 * the nemesis soak.
 *
 * 1. A stack of its own (own-stack.ts: a temporary TRAWL_HOME, every part on free ports, three
 *    brokers unless `--brokers 1`) and every service on it as a child process (services.ts).
 * 2. For `--minutes`: the load (load.ts: a schedule every minute, ad-hoc crawls every 30–60 s) and
 *    the nemesis (nemesis.ts: a fault every 30–90 s, healed); the checker (checker.ts) checks the
 *    jobs completed so far every `--check-minutes` (5).
 * 3. The drain: no new jobs or faults, every job dispatched must complete (`--drain-minutes`, 10);
 *    then the final check (every job, every read model again, a replay of both).
 * 4. The table of faults and invariants, and its JSON (stdout's last line, and `--json FILE`). The
 *    exit code is 1 on any violation or a part that did not answer again.
 *
 * The seed (printed first) fixes the nemesis's faults, targets and pauses, and the ad-hoc
 * crawls' spacing: `--seed` replays the same sequence (what the system does in between varies).
 * `--sabotage` proves the checker bites: before the final round it adds a page to one job's row in
 * Postgres and asks another job's site for a page no crawler may fetch; the run must then end
 * with a `read-models` and a `no-refetch` violation and exit 1.
 *
 * Progress goes to stderr every 30 s; the services' logs stay in TRAWL_HOME/logs/e2e when a
 * violation is found (or with `--keep`).
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createKafka, createLogger, endpoints, httpTarget, readEvents } from '@trawl/streams';
import { formatUpStep } from '@trawl/stack';
import { Pipeline } from '../../src/index.ts';
import { clickhouseOf } from '../chaos/support.ts';
import { Checker } from './checker.ts';
import { Load, SOAK_FETCH_ENV } from './load.ts';
import { FAULT_KINDS, Nemesis, seededRandom, type FaultKind } from './nemesis.ts';
import { startOwnStack, type OwnStack } from './own-stack.ts';
import { faultRows, formatReport, type SoakReport } from './report.ts';
import { Services, SLOTS } from './services.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `--faults kill-broker,pause`: the nemesis picks from these kinds only (a run aimed at one weakness). */
function faultKinds(list: string | undefined): FaultKind[] {
  if (list === undefined) return [...FAULT_KINDS];
  const kinds = list.split(',').map((k) => k.trim()).filter(Boolean);
  const unknown = kinds.filter((k) => !(FAULT_KINDS as readonly string[]).includes(k));
  if (kinds.length === 0 || unknown.length > 0) throw new Error(`--faults takes a comma list of ${FAULT_KINDS.join(', ')}; got "${list}"`);
  return kinds as FaultKind[];
}

function options() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '60' },
      seed: { type: 'string' },
      brokers: { type: 'string', default: '3' },
      json: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'check-minutes': { type: 'string', default: '5' },
      'drain-minutes': { type: 'string', default: '10' },
      sabotage: { type: 'boolean', default: false },
      faults: { type: 'string' },
    },
  });
  const num = (name: string, v: string, ok: (n: number) => boolean) => {
    const n = Number(v);
    if (!ok(n)) throw new Error(`--${name} must be ${name === 'brokers' ? '1 or 3' : 'a positive number'}, got "${v}"`);
    return n;
  };
  return {
    minutes: num('minutes', values.minutes, (n) => n > 0),
    seed: values.seed !== undefined ? num('seed', values.seed, (n) => Number.isInteger(n) && n >= 0 && n < 2 ** 32) : randomBytes(4).readUInt32BE(0),
    brokers: num('brokers', values.brokers, (n) => n === 1 || n === 3),
    json: values.json,
    keep: values.keep,
    checkMinutes: num('check-minutes', values['check-minutes'], (n) => n > 0),
    drainMinutes: num('drain-minutes', values['drain-minutes'], (n) => n > 0),
    sabotage: values.sabotage,
    faults: faultKinds(values.faults),
  };
}

/** `--sabotage`: one wrong read-model row and one forbidden fetch, which the final round must find. */
async function sabotage(p: Pipeline, load: Load, log: (line: string) => void): Promise<void> {
  const events = await p.events(180_000);
  const completed = new Set(events.filter((e) => e.event.name === 'JobCompleted').map((e) => (e.event.value as { job_id: string }).job_id));
  // Completed jobs whose site still serves (not checked yet), with that site.
  const jobs = events
    .filter((e) => e.event.name === 'JobDispatched' && completed.has((e.event.value as { job_id: string }).job_id))
    .map((e) => ({ jobId: (e.event.value as { job_id: string }).job_id, site: load.live.get(new URL((e.event.value as { search_url: string }).search_url).origin) }))
    .filter((j, i, all) => j.site && all.findIndex((x) => x.jobId === j.jobId) === i);
  if (jobs.length < 2) throw new Error('--sabotage needs two completed jobs not checked yet: run for longer, with --check-minutes past --minutes');
  await p.db.pool.query('UPDATE jobs SET pages_fetched = pages_fetched + 1 WHERE job_id = $1', [jobs[0]!.jobId]);
  const url = jobs[1]!.site!.traps.robotsDisallowed;
  await fetch(url).then((r) => r.arrayBuffer());
  log(`sabotage: job ${jobs[0]!.jobId}'s pages_fetched raised by one in Postgres; ${url} (job ${jobs[1]!.jobId}) fetched`);
}

async function main(): Promise<number> {
  const o = options();
  const t0 = Date.now();
  const stamp = () => {
    const s = Math.floor((Date.now() - t0) / 1_000);
    return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  };
  const log = (line: string) => console.error(`[soak ${stamp()}] ${line}`);
  log(`seed ${o.seed} (replay with --seed ${o.seed}), ${o.minutes} min, ${o.brokers} broker(s), faults: ${o.faults.join(', ')}`);

  let aborted = false;
  process.once('SIGINT', () => {
    aborted = true;
    log('interrupted: stopping the load and the nemesis, then tearing the stack down');
  });
  // Logged, not fatal: a stray promise of a client meeting a fault must not end an hour's run unreported.
  process.on('unhandledRejection', (err) => log(`unhandled rejection in the soak itself: ${(err as Error)?.stack ?? String(err)}`));

  let stack: OwnStack | undefined;
  let pipeline: Pipeline | undefined;
  let services: Services | undefined;
  let load: Load | undefined;
  let report: SoakReport | undefined;
  try {
    log('starting a stack of its own (a temporary TRAWL_HOME, free ports)…');
    stack = await startOwnStack({ brokers: o.brokers, onStep: (s) => log(`stack ${formatUpStep(s).trim()}`) });
    log(`stack up in ${stack.home}: kafka ${stack.ports.kafka}…, postgres ${stack.ports.postgres}, registry ${stack.ports.registry}, clickhouse ${stack.ports.clickhouseHttp}, s3 ${stack.ports.s3}`);
    // From here on this process and every child it starts resolve endpoints from the soak's stack.
    for (const [k, v] of Object.entries(stack.env)) process.env[k] = v;
    // This process's own clients meet every broker fault: their kafkajs errors are expected, and
    // stdout is the report's. The services keep logging to their files (Pipeline sets their level).
    process.env.TRAWL_LOG_LEVEL = process.env.TRAWL_SOAK_LOG_LEVEL ?? 'silent';

    pipeline = await Pipeline.start({ env: { ...SOAK_FETCH_ENV, TRAWL_QUOTA_MIN_INTERVAL_SECONDS: '1' } });
    const p = pipeline;
    // A pool's idle connection dropped by a Postgres restart emits 'error': the soak causes that itself.
    p.db.pool.on('error', () => undefined);
    services = await Services.start(p);
    const svc = services;
    for (const deadline = Date.now() + 240_000; ; await sleep(1_000)) {
      const ready = await Promise.all(SLOTS.map((s) => svc.ready(s)));
      if (ready.every(Boolean)) break;
      if (Date.now() > deadline) throw new Error(`services not ready after 240 s: ${SLOTS.filter((_, i) => !ready[i]).join(', ')}`);
    }
    await p.groupSettled('trawl-worker', 2, 180_000);
    log(`services ready: ${SLOTS.join(', ')}`);

    const ch = clickhouseOf(p);
    const logger = createLogger('soak', { ...process.env, TRAWL_LOG_LEVEL: 'silent' });
    const kafka = createKafka({ clientId: 'soak-nemesis', logger });
    const registry = httpTarget(endpoints().schemaRegistryUrl);
    const ok = (url: string, init: RequestInit = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(3_000) }).then((r) => r.ok);
    load = new Load(p, seededRandom(o.seed ^ 0x5bd1e995), log);
    const nemesis = new Nemesis(o.seed, {
      stack,
      services,
      kafka,
      topics: p.topics.specs.map((s) => s.name),
      probes: {
        postgres: async () => (await p.db.pool.query('SELECT 1')).rowCount === 1,
        clickhouse: async () => (await ch.rows<{ x: number }>('SELECT 1 AS x')).length === 1,
        registry: () => ok(`${registry.url}/subjects`, { headers: registry.authorization ? { authorization: registry.authorization } : {} }),
      },
      log,
    }, o.faults);
    const checker = new Checker(p, ch, load.sites, nemesis.faults, log, (origin) => load!.retire(origin));
    const progress = async () => {
      const f = checker.figures;
      const t = Object.values(checker.tallies);
      // The jobs topic alone (a few records a job): cheap enough to read every 30 s.
      const jobs = await readEvents(p.kafka, p.codec, [p.topics.jobs]).catch(() => undefined);
      const ids = (name: string) => new Set(jobs?.filter((e) => e.event.name === name).map((e) => (e.event.value as { job_id: string }).job_id));
      const inLog = jobs ? `${ids('JobDispatched').size} dispatched, ${ids('JobCompleted').size} completed` : 'log unreadable now';
      log(`jobs: ${load!.adhocDispatched} ad hoc sent, ${load!.targetMoves} schedule sites, ${inLog}, ${f.jobsChecked} checked · faults ${nemesis.faults.length} · checks ${t.reduce((s, x) => s + x.checked, 0)}, failed ${t.reduce((s, x) => s + x.failed, 0)} · restarts by keeper ${svc.unplanned.length} · load ${loadavg()[0]!.toFixed(1)}`);
    };

    await load.start();
    nemesis.start();
    log(`load and nemesis running for ${o.minutes} min; checks every ${o.checkMinutes} min`);
    const end = Date.now() + o.minutes * 60_000;
    let nextCheck = Date.now() + o.checkMinutes * 60_000;
    let nextProgress = Date.now() + 30_000;
    while (!aborted && Date.now() < end) {
      await sleep(1_000);
      if (Date.now() >= nextProgress) {
        await progress();
        nextProgress = Date.now() + 30_000;
      }
      if (Date.now() >= nextCheck && Date.now() < end - 60_000) {
        log('checker: a round over the jobs completed so far…');
        await checker.round(false);
        await progress();
        nextCheck = Date.now() + o.checkMinutes * 60_000;
      }
    }
    log('stopping the load and the nemesis (healing the fault under way)…');
    await load.stop();
    await nemesis.stop();

    if (!aborted) {
      log(`drain: waiting up to ${o.drainMinutes} min for every job dispatched to complete…`);
      const drainEnd = Date.now() + o.drainMinutes * 60_000;
      for (;;) {
        const events = await p.events(180_000).catch(() => []);
        const dispatched = new Set(events.filter((e) => e.event.name === 'JobDispatched').map((e) => (e.event.value as { job_id: string }).job_id));
        const done = new Set(events.filter((e) => e.event.name === 'JobCompleted' || e.event.name === 'JobFailed').map((e) => (e.event.value as { job_id: string }).job_id));
        const open = [...dispatched].filter((j) => !done.has(j)).length;
        if (open === 0 || Date.now() > drainEnd || aborted) {
          log(`drain: ${dispatched.size - open} of ${dispatched.size} jobs completed`);
          break;
        }
        if (Date.now() >= nextProgress) {
          log(`drain: ${open} job(s) still running`);
          nextProgress = Date.now() + 30_000;
        }
        await sleep(5_000);
      }
      if (o.sabotage) await sabotage(p, load, log);
      log('checker: the final round (every job, every read model again, replays)…');
      await checker.round(true);
    }
    services.stopKeeping();
    const unrecovered = nemesis.faults.filter((f) => f.recoveryMs === null).length;
    report = {
      seed: o.seed,
      minutes: o.minutes,
      brokers: o.brokers,
      startedAt: new Date(t0).toISOString(),
      elapsedSeconds: (Date.now() - t0) / 1_000,
      faults: faultRows(nemesis.faults),
      faultLog: nemesis.faults,
      invariants: checker.tallies,
      violations: checker.violations,
      unrecovered,
      unplannedExits: services.unplanned.map(({ tail: _tail, ...e }) => e),
      figures: { ...checker.figures, adhocDispatched: load.adhocDispatched, adhocFailed: load.adhocFailed, scheduleTargetMoves: load.targetMoves },
      loadAverage: loadavg(),
      ok: !aborted && checker.violations.length === 0 && unrecovered === 0 && Object.values(checker.tallies).some((t) => t.passed > 0),
    };
    for (const e of services.unplanned) log(`unplanned exit of ${e.slot} (code ${e.code}, signal ${e.signal}); the end of ${e.logFile}:\n${e.tail}`);
    await ch.close();
  } finally {
    services?.stopKeeping();
    if (report) {
      console.log(formatReport(report));
      console.log(JSON.stringify(report));
      if (o.json) writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
    }
    log('tearing down: the services, the sites, the stack…');
    await pipeline?.stop().catch((err: unknown) => log(`pipeline stop: ${(err as Error).message}`));
    await load?.close();
    if (stack) {
      await stack.down().catch((err: unknown) => log(`stack down: ${(err as Error).message}`));
      if (o.keep || !report?.ok) log(`kept ${stack.home} (the services' logs are in logs/e2e)`);
      else rmSync(stack.home, { recursive: true, force: true });
    }
  }
  return report?.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`soak: ${(err as Error)?.stack ?? String(err)}`);
    process.exit(1);
  },
);
