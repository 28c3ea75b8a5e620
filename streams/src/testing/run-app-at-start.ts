import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { appDir, repoRoot } from '@trawl/base';
import { operatorPortVariable } from '../service/operator-server.ts';

export interface StartOutcome {
  /** The exit code; null when it was still running (killed on `until` or the time limit). */
  readonly code: number | null;
  /** Everything it wrote, stdout and stderr. */
  readonly log: string;
}

/**
 * Runs `apps/<role>/<app>/src/main.ts` with tsx, as production runs it, for what happens at its
 * start: until it exits on its own (a refused configuration), until its log holds `until` (then it
 * is killed), or until `timeoutMs`. Operator ports are off unless `env` sets one, so it never meets
 * a running stack's.
 */
export function runAppAtStart(app: string, env: Readonly<Record<string, string>>, options: { readonly until?: string; readonly timeoutMs?: number } = {}): Promise<StartOutcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(appDir(app), 'src', 'main.ts')], {
    cwd: repoRoot,
    env: { ...process.env, TRAWL_LOG_LEVEL: 'info', [operatorPortVariable(app)]: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const read = (d: Buffer) => {
    log += String(d);
    if (options.until && log.includes(options.until)) child.kill('SIGKILL');
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, log });
    }),
  );
}
