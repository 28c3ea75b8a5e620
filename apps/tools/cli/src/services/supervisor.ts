/**
 * Background services without a process manager: each one runs under a keeper (keeper.ts), a
 * detached `node .trawl/build/keeper/main.mjs <name> …` that runs `node .trawl/build/<app>/main.mjs`
 * — the app compiled by compileServices (so the service's pid is the service itself, not a wrapper,
 * and no TypeScript loader stays in it) — as its child, and starts it again when it exits on its
 * own. Both write to `.trawl/logs/<name>.log`; the service's pid is in `.trawl/run/<name>.pid`, the
 * keeper's pid, state and restart count in `.trawl/run/<name>.keeper.json`. A pid file whose
 * process is gone, or whose pid now belongs to another program, counts as stopped.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildRoot, compileApp, compiledMainOf, compiledServiceEnv } from '@trawl/streams/build';
import { logsDir, repoRoot, runDir } from '../lib/paths.ts';
import { mainOf, type ServiceSpec } from './catalogue.ts';
import { compileKeeper, keeperMain } from './keeper-build.ts';
import type { KeeperConfig } from './keeper.ts';
import { commandLine, pidFile, readKeeperState, readPid, removeKeeperState } from './service-files.ts';

/**
 * running: the service runs; restarting: it exited and its keeper starts it again after a delay;
 * stopping: its keeper is stopping it; stopped: neither it nor a keeper runs.
 */
export type ServicePhase = 'running' | 'restarting' | 'stopping' | 'stopped';

export interface ServiceState {
  readonly name: string;
  readonly state: ServicePhase;
  /** The service's pid while it runs. */
  readonly pid: number | null;
  readonly running: boolean;
  /** The keeper's pid while one watches the service; null: unsupervised (or stopped). */
  readonly keeperPid: number | null;
  /** Times the keeper started the service again after it exited on its own. */
  readonly restarts: number;
  readonly log: string;
}

export function logFile(name: string): string {
  return join(logsDir(), `${name}.log`);
}

/** Alive, and still running the service's main (guards against a recycled pid). */
function isOurs(pid: number, spec: ServiceSpec): boolean {
  const args = commandLine(pid);
  if (args === null) return false;
  if (args.length === 0) return true; // no /proc (not Linux): trust the signal check
  // Compiled, or from source as services ran before they were compiled (so `down` still stops those).
  return args.includes(compiledMainOf(spec.app)) || args.includes(mainOf(spec.app));
}

function isKeeperOf(pid: number, spec: ServiceSpec): boolean {
  const args = commandLine(pid);
  if (args === null) return false;
  return args.length === 0 || (args.includes(keeperMain()) && args.includes(spec.name));
}

export function serviceState(spec: ServiceSpec): ServiceState {
  const pid = readPid(pidFile(runDir(), spec.name));
  const running = pid !== null && isOurs(pid, spec);
  const keeper = readKeeperState(runDir(), spec.name);
  const keeperPid = keeper && isKeeperOf(keeper.keeper_pid, spec) ? keeper.keeper_pid : null;
  const state: ServicePhase = running ? 'running' : keeperPid === null ? 'stopped' : keeper!.phase === 'stopping' ? 'stopping' : 'restarting';
  return { name: spec.name, state, pid: running ? pid : null, running, keeperPid, restarts: keeper?.restarts ?? 0, log: logFile(spec.name) };
}

/**
 * Compiles the apps (each once, however many instances it runs as) before startService runs them.
 * Every start compiles afresh (~50–100 ms an app), so a service never runs older code than its sources.
 */
export async function compileServices(specs: readonly ServiceSpec[]): Promise<{ apps: number; ms: number; dir: string }> {
  const started = performance.now();
  const apps = [...new Set(specs.map((spec) => spec.app))];
  await Promise.all([...apps.map((app) => compileApp(app)), compileKeeper()]);
  return { apps: apps.length, ms: performance.now() - started, dir: buildRoot() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the service's keeper detached, which starts the service from its compiled main
 * (compileServices first), and waits (≤ 5 s) until the service runs or the keeper gave up on its
 * first run. A service that runs or is kept already is left alone.
 */
export async function startService(spec: ServiceSpec, env: NodeJS.ProcessEnv): Promise<ServiceState> {
  const current = serviceState(spec);
  if (current.running || current.keeperPid !== null) return current;
  mkdirSync(logsDir(), { recursive: true });
  mkdirSync(runDir(), { recursive: true });
  const main = compiledMainOf(spec.app);
  if (!existsSync(main)) throw new Error(`${spec.app} is not compiled (${main} is missing): compileServices first`);
  const keeper = keeperMain();
  if (!existsSync(keeper)) throw new Error(`the keeper is not compiled (${keeper} is missing): compileServices first`);
  removeKeeperState(runDir(), spec.name); // a keeper's leftovers (SIGKILLed): its count starts over
  const config: Omit<KeeperConfig, 'name'> = { main, log: logFile(spec.name), runDir: runDir() };
  const log = openSync(logFile(spec.name), 'a');
  try {
    const child = spawn(process.execPath, [keeper, spec.name, JSON.stringify(config)], {
      cwd: repoRoot,
      env: { ...env, ...compiledServiceEnv(env), ...spec.env },
      detached: true,
      stdio: ['ignore', log, log],
    });
    if (!child.pid) throw new Error(`could not start ${spec.name}'s keeper`);
    child.unref();
  } finally {
    closeSync(log);
  }
  for (const until = Date.now() + 5_000; Date.now() < until; await sleep(25)) {
    const state = serviceState(spec);
    if (state.running || state.restarts > 0) return state;
  }
  return serviceState(spec);
}

/** Waits until none of the pids is alive and ours; false after `ms`. */
async function gone(check: () => boolean, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) if (!check()) return true;
  return !check();
}

/**
 * Stops the service: through its keeper when one runs (SIGTERM: the keeper stops the service and
 * restarts nothing, also when it was waiting between two runs), else the service itself. SIGTERM
 * first (services drain and commit), SIGKILL after `graceMs`.
 */
export async function stopService(spec: ServiceSpec, graceMs = 20_000): Promise<'stopped' | 'killed' | 'not running'> {
  const state = serviceState(spec);
  if (state.keeperPid !== null) {
    const keeperPid = state.keeperPid;
    process.kill(keeperPid, 'SIGTERM');
    // The keeper gives the service graceMs (its own default: 20 s) before it SIGKILLs it.
    const alive = () => isKeeperOf(keeperPid, spec) || serviceState(spec).running;
    if (await gone(alive, graceMs + 5_000)) return 'stopped';
    if (isKeeperOf(keeperPid, spec)) process.kill(keeperPid, 'SIGKILL');
    const left = serviceState(spec);
    if (left.running && left.pid !== null) process.kill(left.pid, 'SIGKILL');
    rmSync(pidFile(runDir(), spec.name), { force: true });
    removeKeeperState(runDir(), spec.name);
    return 'killed';
  }
  // No keeper (it died, or the service started before services had keepers): the service itself.
  rmSync(pidFile(runDir(), spec.name), { force: true });
  removeKeeperState(runDir(), spec.name);
  if (!state.running || state.pid === null) return 'not running';
  const pid = state.pid;
  process.kill(pid, 'SIGTERM');
  if (await gone(() => isOurs(pid, spec), graceMs)) return 'stopped';
  process.kill(pid, 'SIGKILL');
  return 'killed';
}

/** True while the service has been up for `ms` without exiting (a crash at start shows up here). */
export async function staysUp(spec: ServiceSpec, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!serviceState(spec).running) return false;
    await sleep(100);
  }
  return true;
}

export function lastLogLines(name: string, n = 10): string {
  const file = logFile(name);
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
}
