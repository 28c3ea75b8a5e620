/**
 * TRAWL_HOME/stack.env: the endpoints the stack chose that differ from the defaults, as KEY=value
 * lines that @trawl/streams' `endpoints()` reads. Only keys decided by this `up` change: a part
 * that failed to start keeps its previous line, and a line someone else added is kept.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseEnvFile } from '@trawl/streams';

const HEADER = [
  '# Written by `npm run stack -- up`: endpoints of the local stack that differ from the defaults.',
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

/** Rewrites the file only when its content changes, atomically, since apps may read it at any moment. */
export function writeStackEnv(file: string, updates: Readonly<Record<string, string | undefined>>): boolean {
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const text = renderStackEnv(before === undefined ? {} : parseEnvFile(before), updates);
  if (text === before) return false;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
  return true;
}
