/**
 * Services run as compiled JavaScript, not under `node --import tsx`. tsx stays loaded for a
 * process's whole life — on Node 20 its loader hooks run on a thread of their own with a V8 heap
 * of its own — which costs every service ~35 MB of RSS for nothing after start (a process that
 * imports @trawl/streams and idles: 101–104 MB under tsx, 68–69 MB compiled).
 *
 * `compileService` bundles an app with esbuild (what tsx itself transforms with): `src/main.ts`,
 * and every `src/**\/*-thread.ts` as an entry of its own (for worker threads; no app has one now), into
 * `<outDir>/main.mjs` and `<outDir>/<name>-thread.mjs`, with the code they share and what they
 * import dynamically in `<outDir>/chunks/` (named by content: a chunk a running process loads late
 * is never overwritten or removed by a newer build). The app and the workspace packages it
 * imports go into the bundle; npm packages stay outside and are imported from the very file Node
 * would load for the source (each is resolved from the importing source file, then written as
 * an absolute path), so nested versions such as apps/services/api's own ajv hold. Every module keeps its
 * own `import.meta.url`, so paths relative to a source file (the Avro schemas, the repository
 * root, the console's assets) mean what they mean under tsx. No type checking: `npm run
 * typecheck` does that.
 *
 * A build is written beside and renamed into place, so processes compiling the same app at once
 * (test files in parallel) never run half a file.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { appDir, trawlHome } from '@trawl/base';

/** The service's main module, compiled: what `node <file>` runs. */
export const COMPILED_MAIN = 'main.mjs';

/** Where the apps of this repository are compiled to: `<TRAWL_HOME>/build`. */
export function buildRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(trawlHome(env), 'build');
}

/** Where an app of this repository is compiled to: `<TRAWL_HOME>/build/<app>`. */
export function serviceBuildDir(app: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(buildRoot(env), app);
}

export interface CompiledService {
  /** The file to run: `node <main>`. */
  readonly main: string;
  /** Every file written (main, threads), absolute. */
  readonly files: readonly string[];
  readonly buildMs: number;
}

function threadEntries(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...threadEntries(path));
    else if (entry.name.endsWith('-thread.ts')) found.push(path);
  }
  return found;
}

/** Compiles the app at `appDir` (holding `src/main.ts`) into `outDir`. */
export async function compileService(appDir: string, outDir: string): Promise<CompiledService> {
  const started = performance.now();
  const main = join(appDir, 'src', 'main.ts');
  if (!existsSync(main)) throw new Error(`cannot compile ${appDir}: it has no src/main.ts`);
  const { build } = await import('esbuild');
  const outDirUrl = pathToFileURL(outDir + '/').href;
  const result = await build({
    entryPoints: [main, ...threadEntries(join(appDir, 'src'))],
    outdir: outDir,
    entryNames: '[name]',
    // A dynamic import stays one: its module and the npm packages it imports load when first
    // needed (a parse thread's derivers, linkedom alone ~130 ms), not with the entry.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    sourcemap: 'linked',
    write: false,
    logLevel: 'silent',
    // Node's own resolution for the npm packages it will load: no bundler-only `module` condition
    // or field (@opentelemetry/api's points at files Node cannot import).
    conditions: ['node'],
    mainFields: ['main'],
    // Where this build's thread entries are (code starting a worker thread takes its entry from here).
    define: { __TRAWL_BUILD_DIR__: JSON.stringify(outDirUrl) },
    plugins: [
      {
        name: 'trawl-service',
        setup(b) {
          // npm packages: resolved as from the importing source file, kept outside the bundle.
          b.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData === 'trawl-resolving' || args.path.startsWith('@trawl/') || args.path.startsWith('node:') || isAbsolute(args.path)) return undefined;
            const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'trawl-resolving' });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            return resolved.external ? { path: args.path, external: true } : { path: resolved.path, external: true };
          });
          // Each module's own import.meta.url, as under tsx.
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            const source = readFileSync(args.path, 'utf8');
            const contents = source.includes('import.meta.url') ? source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)) : source;
            return { contents, loader: 'ts', resolveDir: dirname(args.path) };
          });
        },
      },
    ],
  });
  mkdirSync(outDir, { recursive: true });
  const tag = randomUUID().slice(0, 8);
  const files: string[] = [];
  // Chunks first, entries last: an entry imports its chunks, so a process starting meanwhile
  // finds either the old entry (whose chunks stay) or a new one whose chunks are all in place.
  const chunksFirst = [...result.outputFiles].sort((a, b) => Number(!a.path.includes('/chunks/')) - Number(!b.path.includes('/chunks/')));
  for (const file of chunksFirst) {
    mkdirSync(dirname(file.path), { recursive: true });
    const temp = `${file.path}.${tag}.tmp`;
    writeFileSync(temp, file.contents);
    renameSync(temp, file.path);
    files.push(file.path);
  }
  return { main: join(outDir, COMPILED_MAIN), files, buildMs: performance.now() - started };
}

const compiling = new Map<string, Promise<CompiledService>>();

/**
 * Compiles an app of this repository (apps/<role>/<app>) into serviceBuildDir(app), once per process:
 * later calls share the first build.
 */
export function compileApp(app: string, env: NodeJS.ProcessEnv = process.env): Promise<CompiledService> {
  const outDir = serviceBuildDir(app, env);
  let pending = compiling.get(outDir);
  if (!pending) {
    pending = compileService(appDir(app), outDir);
    pending.catch(() => compiling.delete(outDir));
    compiling.set(outDir, pending);
  }
  return pending;
}

/**
 * The environment a compiled service runs with: Node's on-disk compile cache
 * (`<TRAWL_HOME>/build/compile-cache`, or NODE_COMPILE_CACHE as given), so a process or thread
 * that starts again loads its modules from V8's cached code instead of compiling them. A parse
 * thread replaced after a time limit starts in ~160 ms instead of ~270 ms, a service's start
 * is shorter, and the cache is keyed by each file's content and Node's version, so a new build
 * never runs stale code.
 */
export function compiledServiceEnv(env: NodeJS.ProcessEnv = process.env): { readonly NODE_COMPILE_CACHE: string } {
  return { NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE || join(buildRoot(env), 'compile-cache') };
}

/** An app's compiled main: what `node` is given, and what `trawl status` looks for in a process's command line. */
export function compiledMainOf(app: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(serviceBuildDir(app, env), COMPILED_MAIN);
}
