/** Results as JSON under `<repo>/bench-results/` (git-ignored), one file per command. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@trawl/streams';

export function writeResults(file: string, data: unknown): string {
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  writeFileSync(path, JSON.stringify(data, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n');
  return path;
}
