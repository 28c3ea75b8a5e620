/**
 * The files through which `trawl` and the keepers of its services talk, under `$TRAWL_HOME/run/`:
 * `<name>.pid` (the service's pid while it runs) and `<name>.keeper.json` (the keeper's pid, its
 * state and the restart count). Node built-ins only: the keeper's bundle includes this file.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type KeeperPhase = 'running' | 'restarting' | 'stopping';

export interface KeeperState {
  readonly keeper_pid: number;
  readonly phase: KeeperPhase;
  /** The service's pid while it runs. */
  readonly pid: number | null;
  /** Times the service was started again after it exited on its own. */
  readonly restarts: number;
  /** When the current run started, or when the next one will (epoch ms). */
  readonly since: number;
  readonly last_exit: { readonly code: number | null; readonly signal: string | null; readonly at: number } | null;
}

export function pidFile(runDir: string, name: string): string {
  return join(runDir, `${name}.pid`);
}

export function keeperFile(runDir: string, name: string): string {
  return join(runDir, `${name}.keeper.json`);
}

export function readPid(file: string): number | null {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

export function readKeeperState(runDir: string, name: string): KeeperState | null {
  try {
    return JSON.parse(readFileSync(keeperFile(runDir, name), 'utf8')) as KeeperState;
  } catch {
    return null; // none, or caught between write and rename (never: the rename is atomic)
  }
}

/** Written beside and renamed into place, so a reader never sees half a file. */
export function writeKeeperState(runDir: string, name: string, state: KeeperState): void {
  const file = keeperFile(runDir, name);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(state) + '\n');
  renameSync(`${file}.${process.pid}.tmp`, file);
}

export function removeKeeperState(runDir: string, name: string): void {
  rmSync(keeperFile(runDir, name), { force: true });
}

/** The process's command line, or null when it is gone (or there is no /proc: not Linux). */
export function commandLine(pid: number): string[] | null {
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return []; // alive, but no /proc to tell what it runs
  }
}
