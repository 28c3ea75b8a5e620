/**
 * The keeper of one service: the detached process `trawl up` starts instead of the service itself.
 * It runs the service as its child, and when the service exits without having been asked to — a
 * crash, a SIGKILL, the out-of-memory killer — it writes a line saying so into the service's log
 * and starts it again after the restart policy's delay, counting the restarts in its state file
 * (service-files.ts), where `trawl status` reads them.
 *
 * SIGTERM (what `trawl down` sends) stops it: the service gets SIGTERM and `graceMs` to drain and
 * commit, then SIGKILL; a keeper waiting between two runs simply ends. Nothing is restarted once
 * the keeper was asked to stop.
 *
 * One keeper per service rather than one for all: a keeper that dies takes nothing else with it, and
 * its service keeps running (`trawl status` shows it unsupervised; `trawl down` still stops it).
 * Node built-ins only, bundled on its own (keeper-build.ts): a keeper is a small process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { RestartPolicy, type RestartPolicyOptions } from './restart-policy.ts';
import { pidFile, removeKeeperState, writeKeeperState, type KeeperState } from './service-files.ts';

export interface KeeperConfig {
  /** The service's instance name (its log and pid files). */
  readonly name: string;
  /** The compiled main module `node` runs. */
  readonly main: string;
  readonly log: string;
  readonly runDir: string;
  /** How long the service may take to stop after SIGTERM before SIGKILL. Default 20 s. */
  readonly graceMs?: number;
  readonly restart?: RestartPolicyOptions;
}

export function runKeeper(config: KeeperConfig): void {
  const policy = new RestartPolicy(config.restart);
  const graceMs = config.graceMs ?? 20_000;
  let child: ChildProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopping = false;
  let state: KeeperState = { keeper_pid: process.pid, phase: 'running', pid: null, restarts: 0, since: Date.now(), last_exit: null };

  const save = (next: Partial<KeeperState>) => {
    state = { ...state, ...next };
    writeKeeperState(config.runDir, config.name, state);
  };
  // One JSON line, as the services log (pino's fields), so `trawl logs`-style tools read it alike.
  const logLine = (level: number, msg: string, fields: Record<string, unknown>) =>
    appendFileSync(config.log, JSON.stringify({ level, time: Date.now(), pid: process.pid, name: 'keeper', service: config.name, ...fields, msg }) + '\n');

  const start = () => {
    timer = undefined;
    const log = openSync(config.log, 'a');
    try {
      child = spawn(process.execPath, [config.main], { env: process.env, stdio: ['ignore', log, log] });
    } finally {
      closeSync(log);
    }
    const started = Date.now();
    const pid = child.pid ?? null;
    if (pid !== null) writeFileSync(pidFile(config.runDir, config.name), `${pid}\n`);
    save({ phase: 'running', pid, since: started });
    child.once('error', (err) => logLine(50, 'service could not be started', { err: err.message }));
    child.once('exit', (code, signal) => {
      child = undefined;
      rmSync(pidFile(config.runDir, config.name), { force: true });
      const at = Date.now();
      if (stopping) return finish();
      const delay = policy.next(at - started);
      const restarts = state.restarts + 1;
      // The log line first: whoever reads the new state (`trawl status`) finds its reason logged.
      logLine(40, `service exited (${signal ?? `code ${code}`}) after ${at - started} ms; restart ${restarts} in ${delay} ms`, {
        code,
        signal,
        ran_ms: at - started,
        restarts,
        restart_in_ms: delay,
      });
      save({ phase: 'restarting', pid: null, restarts, since: at + delay, last_exit: { code, signal, at } });
      timer = setTimeout(start, delay);
    });
  };

  const finish = () => {
    removeKeeperState(config.runDir, config.name);
    process.exit(0);
  };

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    save({ phase: 'stopping' });
    logLine(30, `keeper stopping on ${signal}`, {});
    if (timer) {
      clearTimeout(timer);
      return finish();
    }
    if (!child) return finish();
    child.kill('SIGTERM');
    setTimeout(() => child?.kill('SIGKILL'), graceMs).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  start();
}
