/**
 * What loading a package loads: a library that talks to no Kafka (the content store, Postgres
 * access) must not load a Kafka client, which patches and times things at load. A test asks a fresh
 * process, since the test runner's own process has loaded whatever other tests needed.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../config/endpoints.ts';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'loaded-modules-child.ts');
/** What the child prints before its JSON line (loaded-modules-child.ts). */
const MARKER = 'trawl-loaded-modules:';

/**
 * Packages that talk Kafka: the clients (kafkajs and its registry client, and the clients that
 * could replace it) and Trawl's Kafka runtime, which loads one.
 */
const KAFKA_PACKAGE = /^(kafkajs|@kafkajs\/.+|@platformatic\/kafka|@confluentinc\/kafka-javascript|node-rdkafka|@trawl\/streams)$/;

export interface LoadedModules {
  /** Every module file the process loaded, absolute paths (symbolic links resolved, as Node loads them). */
  readonly files: readonly string[];
  /** The package of each of those files (the nearest package.json with a name): npm packages and Trawl's own. */
  readonly packages: readonly string[];
}

/**
 * Imports `specifiers` (package names or file URLs) in a fresh Node process under tsx and reports
 * every module that loaded. Rejects when the import fails, with the child's output.
 */
export function modulesLoadedBy(specifiers: readonly string[], options: { readonly timeoutMs?: number } = {}): Promise<LoadedModules> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...specifiers], { cwd: repoRoot, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += String(d)));
  child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 45_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith(MARKER));
      if (code !== 0 || !line) {
        reject(new Error(`importing ${specifiers.join(', ')} failed (exit ${code ?? signal}): ${(stderr || stdout).slice(-2_000)}`));
        return;
      }
      const files = JSON.parse(line.slice(MARKER.length)) as string[];
      resolve({ files, packages: [...new Set(files.map(packageOf).filter((p): p is string => p !== undefined))].sort() });
    });
  });
}

/** The Kafka clients and the Kafka runtime among the packages that loaded; empty for a library that talks to no Kafka. */
export function kafkaPackagesIn(loaded: LoadedModules): string[] {
  return loaded.packages.filter((name) => KAFKA_PACKAGE.test(name));
}

const nameOfDir = new Map<string, string | undefined>();

/** The name in the nearest package.json above `file` that has one (build folders hold nameless ones). */
function packageOf(file: string): string | undefined {
  let dir = dirname(file);
  const seen: string[] = [];
  let name: string | undefined;
  for (;;) {
    if (nameOfDir.has(dir)) {
      name = nameOfDir.get(dir);
      break;
    }
    seen.push(dir);
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name;
      if (name) break;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  for (const d of seen) nameOfDir.set(d, name);
  return name;
}
