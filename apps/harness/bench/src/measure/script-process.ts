/**
 * A TypeScript script of this package run as its own Node process, talking back in JSON lines on
 * stdout. Used for the site server and for the in-process contenders (Crawlee, the limit), so that
 * each has its own pid to measure and none shares the bench's event loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = dirname(dirname(fileURLToPath(import.meta.url)));

export interface ScriptProcess {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves with the first JSON line for which `match` holds; rejects if the process exits first. */
  waitFor<T = Record<string, unknown>>(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<T>;
  readonly exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface ScriptOptions {
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** stderr goes here (appended); dropped when absent. */
  readonly logFile?: string;
  readonly nodeArgs?: readonly string[];
}

/** Starts `src/<relative>` with tsx. */
export function startScript(relative: string, options: ScriptOptions = {}): ScriptProcess {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', join(SRC, relative), ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', options.logFile ? 'pipe' : 'ignore'],
  });
  if (options.logFile) {
    mkdirSync(dirname(options.logFile), { recursive: true });
    child.stderr!.pipe(createWriteStream(options.logFile, { flags: 'a' }));
  }
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return; // a library printing to stdout; not ours
    }
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    process: child,
    pid: child.pid!,
    exited,
    waitFor<T>(match: (line: Record<string, unknown>) => boolean, timeoutMs = 30 * 60_000): Promise<T> {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen as T);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${relative}: no matching line within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l as T);
          },
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${relative} exited with code ${code} before answering${options.logFile ? `; see ${options.logFile}` : ''}`));
        });
      });
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
