/**
 * Background services without a process manager: each one is a detached `node
 * .trawl/build/<app>/main.mjs` — the app compiled by compileServices (so the pid is the service
 * itself, not a wrapper, and no TypeScript loader stays in it) — writing to
 * `.trawl/logs/<name>.log`, with its pid in `.trawl/run/<name>.pid`. A pid file whose process is
 * gone, or whose pid now belongs to another program, counts as stopped.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRoot, compileApp, compiledMainOf } from '@trawl/streams/build';
import { logsDir, repoRoot, runDir } from '../lib/paths.ts';
import { mainOf, type ServiceSpec } from './catalogue.ts';

export interface ServiceState {
  readonly name: string;
  readonly pid: number | null;
  readonly running: boolean;
  readonly log: string;
}

function pidFile(name: string): string {
  return join(runDir(), `${name}.pid`);
}

export function logFile(name: string): string {
  return join(logsDir(), `${name}.log`);
}

function readPid(name: string): number | null {
  const file = pidFile(name);
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** Alive, and still running the service's main (guards against a recycled pid). */
function isOurs(pid: number, spec: ServiceSpec): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // Compiled, or from source as services ran before they were compiled (so `down` still stops those).
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return args.includes(compiledMainOf(spec.app)) || args.includes(mainOf(spec.app));
  } catch {
    return true; // no /proc (not Linux): trust the signal check
  }
}

export function serviceState(spec: ServiceSpec): ServiceState {
  const pid = readPid(spec.name);
  return { name: spec.name, pid, running: pid !== null && isOurs(pid, spec), log: logFile(spec.name) };
}

/**
 * Compiles the apps (each once, however many instances it runs as) before startService runs them.
 * Every start compiles afresh (~50–100 ms an app), so a service never runs older code than its sources.
 */
export async function compileServices(specs: readonly ServiceSpec[]): Promise<{ apps: number; ms: number; dir: string }> {
  const started = performance.now();
  const apps = [...new Set(specs.map((spec) => spec.app))];
  await Promise.all(apps.map((app) => compileApp(app)));
  return { apps: apps.length, ms: performance.now() - started, dir: buildRoot() };
}

/** Starts the service detached, from its compiled main (compileServices first). */
export function startService(spec: ServiceSpec, env: NodeJS.ProcessEnv): ServiceState {
  const current = serviceState(spec);
  if (current.running) return current;
  mkdirSync(logsDir(), { recursive: true });
  mkdirSync(runDir(), { recursive: true });
  const log = openSync(logFile(spec.name), 'a');
  try {
    const main = compiledMainOf(spec.app);
    if (!existsSync(main)) throw new Error(`${spec.app} is not compiled (${main} is missing): compileServices first`);
    const child = spawn(process.execPath, [main], {
      cwd: repoRoot,
      env: { ...env, ...spec.env },
      detached: true,
      stdio: ['ignore', log, log],
    });
    if (!child.pid) throw new Error(`could not start ${spec.name}`);
    writeFileSync(pidFile(spec.name), `${child.pid}\n`);
    child.unref();
    return { name: spec.name, pid: child.pid, running: true, log: logFile(spec.name) };
  } finally {
    closeSync(log);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM (graceful: services drain and commit), then SIGKILL after `graceMs`. */
export async function stopService(spec: ServiceSpec, graceMs = 20_000): Promise<'stopped' | 'killed' | 'not running'> {
  const state = serviceState(spec);
  rmSync(pidFile(spec.name), { force: true });
  if (!state.running || state.pid === null) return 'not running';
  process.kill(state.pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    if (!isOurs(state.pid, spec)) return 'stopped';
    await sleep(100);
  }
  process.kill(state.pid, 'SIGKILL');
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
