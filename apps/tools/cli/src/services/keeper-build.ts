/**
 * Compiles the keeper (keeper-main.ts and the node-only files it imports) into one plain module,
 * `$TRAWL_HOME/build/keeper/main.mjs`, as the services are compiled: a keeper then starts in tens of
 * milliseconds and holds no TypeScript loader (~35 MB) for the life of the service it watches.
 * Written beside and renamed into place, so two `trawl up` at once never run half a file.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRoot } from '@trawl/streams/build';

export function keeperMain(env: NodeJS.ProcessEnv = process.env): string {
  return join(buildRoot(env), 'keeper', 'main.mjs');
}

export async function compileKeeper(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { build } = await import('esbuild');
  const out = keeperMain(env);
  const result = await build({
    entryPoints: [join(import.meta.dirname, 'keeper-main.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  mkdirSync(join(out, '..'), { recursive: true });
  const tmp = `${out}.${randomUUID()}.tmp`;
  writeFileSync(tmp, result.outputFiles[0]!.contents);
  renameSync(tmp, out);
  return out;
}
