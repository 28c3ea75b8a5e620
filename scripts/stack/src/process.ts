/**
 * Detached processes and their pid files. A part is the stack's own only when TRAWL_HOME/run
 * names its pid AND that process's command line still carries the part's marker (a path under
 * TRAWL_HOME): after a reboot the pid may belong to anyone, and `down` must never signal a
 * stranger.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OsUser } from './os-user.ts';
import { withPrivateUmask } from './private-dirs.ts';

export interface DetachedSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this OS user (only possible as root): Postgres refuses to run as root. */
  readonly user?: OsUser;
}

/**
 * Starts a process in its own session (so a Ctrl-C on `stack up` or the end of `npm test` does not
 * take it down), stdin closed, stdout and stderr appended to its log. Returns its pid.
 */
export function spawnDetached(spec: DetachedSpec): number {
  mkdirSync(dirname(spec.logFile), { recursive: true });
  const fd = openSync(spec.logFile, 'a', 0o600);
  try {
    // Logs are appended across starts: a marker lets a reader (and logTail) find this start.
    writeSync(fd, `\n--- ${new Date().toISOString()} trawl stack starts: ${spec.command} ${spec.args.map((a) => (a.length > 200 ? `${a.slice(0, 60)}…` : a)).join(' ')}\n`);
    // Under umask 077: what the part creates (data, logs) is its owner's alone (private-dirs.ts).
    const child = withPrivateUmask(() => spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      detached: true,
      stdio: ['ignore', fd, fd],
      ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
    }));
    // A failed exec (ENOENT) is reported asynchronously; the health wait sees the dead pid.
    child.on('error', () => undefined);
    child.unref();
    if (child.pid === undefined) throw new Error(`cannot start ${spec.command}`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** True while the pid names a live process; a zombie counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // Field 3 of /proc/<pid>/stat is the state; the command name before it may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return existsSync(`/proc/${pid}`);
  }
}

/** The process's arguments, argv[0] first; empty when it is gone or unreadable. */
export function commandArgs(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

export function pidFile(runDir: string, part: string): string {
  return join(runDir, `${part}.pid`);
}

export function writePid(runDir: string, part: string, pid: number): void {
  mkdirSync(runDir, { recursive: true });
  writeFileSync(pidFile(runDir, part), `${pid}\n`);
}

export function removePid(runDir: string, part: string): void {
  rmSync(pidFile(runDir, part), { force: true });
}

/**
 * The pid of the part the stack started, if it still runs: the pid file exists, the process lives
 * and one of its arguments is exactly `marker` (a path under TRAWL_HOME, so two stacks with
 * different homes never claim each other's processes). A stale pid file is removed.
 */
export function ownedPid(runDir: string, part: string, marker: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(runDir, part), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && commandArgs(pid).includes(marker)) return pid;
  removePid(runDir, part);
  return undefined;
}

export interface StopOptions {
  /** The polite signal: SIGTERM for Java and ClickHouse, SIGINT ("fast shutdown") for Postgres. */
  readonly signal?: NodeJS.Signals;
  /** How long to wait before SIGKILL. Kafka's controlled shutdown takes a few seconds. */
  readonly graceMs?: number;
}

/** Stops a process politely, then by force. Returns whether SIGKILL was needed. */
export async function stopProcess(pid: number, { signal = 'SIGTERM', graceMs = 30_000 }: StopOptions = {}): Promise<boolean> {
  if (!signalQuietly(pid, signal)) return false;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return false;
    await sleep(100);
  }
  signalQuietly(pid, 'SIGKILL');
  for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100);
  return true;
}

function signalQuietly(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The last `lines` lines of each log that exists and is not empty, labelled with its name. */
export function logTail(files: readonly string[], lines = 20): string | undefined {
  const parts: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    // Only this start's lines: what follows the last marker spawnDetached wrote.
    const marker = text.lastIndexOf('\n--- ');
    const own = marker >= 0 && text.slice(marker).includes(' trawl stack starts: ') ? text.slice(marker + 1) : text;
    const tail = own.trimEnd().split('\n').slice(-lines);
    if (tail.length === 0 || (tail.length === 1 && tail[0] === '')) continue;
    parts.push(`--- ${file} (last ${tail.length} lines)\n${tail.join('\n')}`);
  }
  return parts.length > 0 ? parts.join('\n') : undefined;
}

function childrenMap(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

function memoryKb(pid: number): number {
  // Pss splits shared pages among the processes mapping them, so Postgres's shared buffers are
  // counted once across its backends instead of once per backend (as plain RSS would).
  for (const [file, key] of [
    [`/proc/${pid}/smaps_rollup`, 'Pss:'],
    [`/proc/${pid}/status`, 'VmRSS:'],
  ] as const) {
    try {
      const line = readFileSync(file, 'utf8')
        .split('\n')
        .find((l) => l.startsWith(key));
      if (line) return Number(line.slice(key.length).trim().split(/\s+/)[0]);
    } catch {
      // Not readable (another user's process without root): try the next source.
    }
  }
  return 0;
}

/** Memory of a process and all its descendants, in MB. */
export function treeMemoryMb(pid: number): number {
  const children = childrenMap();
  let kb = 0;
  const queue = [pid];
  for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
    kb += memoryKb(p);
    queue.push(...(children.get(p) ?? []));
  }
  return Math.round(kb / 1024);
}

/**
 * The pid of the process listening on a local TCP port, found through /proc/net/tcp{,6} and the
 * processes' socket descriptors. Best effort: without root only our own processes are visible.
 * Used to show pid and memory of external parts (a system Postgres).
 */
export function listenerPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const row of text.split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      const local = cols[1];
      // State 0A is LISTEN; the local address ends with the port in hex.
      if (cols[3] === '0A' && local && parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && cols[9]) inodes.add(cols[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m?.[1] && inodes.has(m[1])) return Number(entry);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return undefined;
}

export interface RunResult {
  readonly code: number | null;
  readonly output: string;
}

/**
 * Runs a command to completion without blocking the event loop (parts start in parallel),
 * stdout and stderr together. Resolves on the process's exit rather than on its pipes closing:
 * `pg_ctl start` leaves a server behind that must not keep us waiting.
 */
export function run(command: string, args: readonly string[], opts: { cwd?: string; user?: OsUser; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    // Under umask 077, as spawnDetached: `pg_ctl start` leaves the server running with it.
    const child = withPrivateUmask(() => spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
    }));
    const collect = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, output: output + err.message });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      // The output is whole once both pipes close ('close'), which a loaded machine may deliver
      // well after 'exit'; a grandchild holding the pipes open would keep them open for ever, so
      // past a short grace they are dropped.
      const done = () => {
        clearTimeout(grace);
        child.stdout.destroy();
        child.stderr.destroy();
        resolve({ code, output });
      };
      const grace = setTimeout(done, 1_000);
      child.once('close', done);
    });
  });
}
