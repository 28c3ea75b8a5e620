/**
 * The front end's build: esbuild bundles src/web/main.ts (TypeScript, uPlot, the CSS) into
 * content-hashed files under dist/assets, and writes dist/index.html pointing at them. Used by
 * `npm run build` (turbo) and, when dist is missing or older than the sources, by the server at
 * its first page request — so `npm start` and a clean clone's `npm test` need no build step.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const WEB_DIR = join(PACKAGE_ROOT, 'src', 'web');
export const DEFAULT_DIST_DIR = join(PACKAGE_ROOT, 'dist');

export interface BundleManifest {
  readonly built_at: string;
  /** Output files by role, relative to dist/. */
  readonly script: string;
  readonly style: string;
  readonly bytes: Readonly<Record<string, number>>;
  readonly build_ms: number;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The manifest of a usable build in `distDir`, or undefined when there is none or the sources are newer. */
export function currentBuild(distDir: string = DEFAULT_DIST_DIR): BundleManifest | undefined {
  const file = join(distDir, 'manifest.json');
  if (!existsSync(file)) return undefined;
  // Sources ship with the package: when they exist and are newer, the build is stale.
  if (existsSync(WEB_DIR) && newestMtime(WEB_DIR) > statSync(file).mtimeMs) return undefined;
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as BundleManifest;
  return existsSync(join(distDir, manifest.script)) && existsSync(join(distDir, manifest.style)) ? manifest : undefined;
}

export async function buildBundle(options: { distDir?: string; minify?: boolean } = {}): Promise<BundleManifest> {
  const distDir = options.distDir ?? DEFAULT_DIST_DIR;
  const started = performance.now();
  const assets = join(distDir, 'assets');
  rmSync(assets, { recursive: true, force: true });
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(WEB_DIR, 'main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    outdir: assets,
    entryNames: 'app-[hash]',
    minify: options.minify ?? true,
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'silent',
    legalComments: 'linked',
    // Output paths in the metafile are relative to this.
    absWorkingDir: PACKAGE_ROOT,
  });
  const files = Object.keys(result.metafile.outputs).map((p) => relative(distDir, join(PACKAGE_ROOT, p)));
  const script = files.find((f) => f.endsWith('.js'));
  const style = files.find((f) => f.endsWith('.css'));
  if (!script || !style) throw new Error(`the console build produced no script or stylesheet: ${files.join(', ')}`);
  const bytes: Record<string, number> = {};
  for (const f of files) bytes[f] = statSync(join(distDir, f)).size;
  const html = readFileSync(join(WEB_DIR, 'index.html'), 'utf8').replace('%STYLE%', `/${style}`).replace('%SCRIPT%', `/${script}`);
  writeFileSync(join(distDir, 'index.html'), html);
  const manifest: BundleManifest = { built_at: new Date().toISOString(), script, style, bytes, build_ms: Math.round(performance.now() - started) };
  writeFileSync(join(distDir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return manifest;
}
