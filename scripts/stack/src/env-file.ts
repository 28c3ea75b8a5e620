/**
 * TRAWL_HOME/stack.env: the endpoints the stack chose that differ from the defaults, as KEY=value
 * lines that @trawl/streams' `endpoints()` reads. Only keys decided by this `up` change: a part
 * that failed to start keeps its previous line, and a line someone else added is kept.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnvFile } from '@trawl/streams';
import { keepPrivate, writeSecretFile } from './credentials.ts';

const HEADER = [
  '# Written by `npm run stack -- up`: endpoints of the local stack that differ from the defaults,',
  '# with the credentials services use in them (keep it private: mode 0600).',
  '# Read by @trawl/streams endpoints(); a variable set in the environment wins over this file.',
];

/**
 * The new file text. `updates` maps a key to its new value, or to `undefined` to drop it (the
 * part is back on its default or is external); keys absent from `updates` keep their line.
 */
export function renderStackEnv(
  previous: Readonly<Record<string, string>>,
  updates: Readonly<Record<string, string | undefined>>,
): string {
  const merged = new Map(Object.entries(previous));
  for (const [k, v] of Object.entries(updates)) {
    if (v === undefined) merged.delete(k);
    else merged.set(k, v);
  }
  const lines: string[] = [];
  for (const [k, v] of [...merged].sort(([a], [b]) => a.localeCompare(b))) {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(k)) throw new Error(`stack.env key "${k}" is not an environment variable name`);
    if (/[\r\n]/.test(v)) throw new Error(`stack.env value of ${k} contains a line break`);
    lines.push(`${k}=${v}`);
  }
  return [...HEADER, ...lines].join('\n') + '\n';
}

/**
 * Rewrites the file only when its content changes, atomically, since apps may read it at any
 * moment; readable by its owner only, since endpoint URLs carry the stack's credentials.
 */
export function writeStackEnv(file: string, updates: Readonly<Record<string, string | undefined>>): boolean {
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const text = renderStackEnv(before === undefined ? {} : parseEnvFile(before), updates);
  if (text === before) {
    keepPrivate(file);
    return false;
  }
  writeSecretFile(file, text);
  return true;
}
