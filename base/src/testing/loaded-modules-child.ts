/**
 * Run by `modulesLoadedBy` (loaded-modules.ts) in a fresh Node process under tsx: imports each
 * module named on the command line and prints every module that loading resolved, ESM and CommonJS
 * alike, as one JSON line after a marker (a module may log while it loads).
 *
 * `registerHooks` sees every resolution, `import` and `require` both, whatever the module format
 * of the client (kafkajs is CommonJS, some of its successors are ESM); `require.cache` adds the
 * CommonJS modules loaded through a path the hooks may not see.
 */
import { createRequire, registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

const LOADED_MARKER = 'trawl-loaded-modules:';

const resolved = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    resolved.add(result.url);
    return result;
  },
});

async function main(specifiers: readonly string[]): Promise<void> {
  for (const specifier of specifiers) await import(specifier);
  const files = new Set<string>();
  for (const url of resolved) if (url.startsWith('file:')) files.add(fileURLToPath(url));
  for (const file of Object.keys(createRequire(import.meta.url).cache)) files.add(file);
  process.stdout.write(`\n${LOADED_MARKER}${JSON.stringify([...files].sort())}\n`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
