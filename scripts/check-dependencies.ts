/**
 * Declared = imported, per workspace package: fails (exit 1) when a package imports a package its
 * package.json does not declare, or declares one nothing of it uses. Run by `npm run lint`.
 *
 * What counts:
 *   * imports: every `import`/`export … from`, `import type`, `import()` and `require()` with a
 *     bare specifier in the package's own .ts/.js/.mjs files (src, tests, benches, configs);
 *   * a declared package is used when it is imported, when one of its binaries appears in the
 *     package's npm scripts (or in a shell script they run), or, for `@types/x`, when `x` is used
 *     (`@types/node` when the package imports `node:` modules);
 *   * the root's devDependencies are the toolchain every workspace shares (vitest, tsx,
 *     typescript, @types/node): they count as declared in every package, and are used when any
 *     package uses them;
 *   * a file that ships (not a test, bench or config, in a package that ships: a service with
 *     `src/main.ts`, a binary, or a dependency of one) may import only `dependencies`: the
 *     production image installs no devDependencies.
 *
 * Usage: tsx scripts/check-dependencies.ts
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');
const CODE = /\.(?:[cm]?[jt]s|tsx)$/;
const SKIP_DIRS = new Set(['fixtures', 'node_modules', 'dist', '.trawl', '.turbo', 'coverage', 'bench-results', 'test-artifacts', 'target', '.git']);
/** Files that never ship: tests and their support, benches, tool configs. */
const DEV_FILE = /(?:^|\/)(?:test|tests|bench|testing)\/|\.test\.[cm]?[jt]s$|(?:^|\/)[\w.-]+\.config\.[cm]?[jt]s$/;

interface Manifest {
  name: string;
  bin?: string | Record<string, string>;
  workspaces?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for relative and built-in ones. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || specifier.startsWith('#')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return builtinModules.includes(name) ? undefined : name;
}

/** Module specifiers of a source file: static, type-only and dynamic imports, re-exports, require(). TypeScript's scanner, not a regex: strings that look like imports are not. */
export function specifiers(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
}

/** The package that `@types/x` types (`@types/a__b` → `@a/b`). */
const typed = (name: string): string => {
  const bare = name.slice('@types/'.length);
  return bare.includes('__') ? `@${bare.replace('__', '/')}` : bare;
};

/** The `@types/` package of a name (`@a/b` → `@types/a__b`): what declares a types-only module such as `mdast`. */
const typesOf = (name: string): string => `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;

function files(dir: string, skip: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (SKIP_DIRS.has(entry) || skip.has(path)) continue;
    if (statSync(path).isDirectory()) out.push(...files(path, skip));
    else if (CODE.test(entry) && !entry.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function workspaceDirs(root: Manifest): string[] {
  return (root.workspaces ?? []).flatMap((w) =>
    w.endsWith('/*') ? readdirSync(join(ROOT, w.slice(0, -2))).map((d) => join(ROOT, w.slice(0, -2), d)) : [join(ROOT, w)],
  ).filter((d) => existsSync(join(d, 'package.json')));
}

/** Workspace packages that ship: services (`src/main.ts`), binaries, and what they depend on. */
function shippingPackages(dirs: readonly string[]): Set<string> {
  const manifests = new Map(dirs.map((d) => [readJson<Manifest>(join(d, 'package.json')).name, { dir: d, manifest: readJson<Manifest>(join(d, 'package.json')) }]));
  const ships = new Set<string>();
  const visit = (name: string): void => {
    const m = manifests.get(name);
    if (!m || ships.has(name)) return;
    ships.add(name);
    for (const dep of Object.keys(m.manifest.dependencies ?? {})) visit(dep);
  };
  for (const [name, { dir, manifest }] of manifests) if (existsSync(join(dir, 'src', 'main.ts')) || manifest.bin) visit(name);
  return ships;
}

/** Binary names of an installed package. */
function binsOf(name: string): string[] {
  const file = join(ROOT, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return [];
  const { bin } = readJson<{ bin?: string | Record<string, string> }>(file);
  if (!bin) return [];
  return typeof bin === 'string' ? [name.split('/').pop()!] : Object.keys(bin);
}

/** The package's npm scripts and the shell scripts they run (`bash scripts/test`). */
function scriptText(dir: string, manifest: Manifest): string {
  const commands = Object.values(manifest.scripts ?? {});
  const shells = commands.flatMap((c) => [...c.matchAll(/\bbash\s+([\w./-]+)/g)].map((m) => join(dir, m[1]!))).filter((f) => existsSync(f));
  return [...commands, ...shells.map((f) => readFileSync(f, 'utf8'))].join('\n');
}

export interface Finding {
  readonly pkg: string;
  readonly problem: string;
}

export function check(): Finding[] {
  const rootManifest = readJson<Manifest>(join(ROOT, 'package.json'));
  const workspaces = workspaceDirs(rootManifest);
  const toolchain = new Set(Object.keys(rootManifest.devDependencies ?? {}));
  const toolchainUsed = new Set<string>();
  const ships = shippingPackages(workspaces);
  const findings: Finding[] = [];
  const pending: { pkg: string; name: string }[] = [];

  for (const dir of [ROOT, ...workspaces]) {
    const manifest = readJson<Manifest>(join(dir, 'package.json'));
    const deps = new Set(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies }));
    const devDeps = new Set(Object.keys(manifest.devDependencies ?? {}));
    const isRoot = dir === ROOT;
    const used = new Set<string>();
    let usesNode = false;
    // The root's own files are those outside every workspace.
    for (const file of files(dir, isRoot ? new Set(workspaces) : new Set())) {
      const rel = relative(dir, file);
      const dev = isRoot || !ships.has(manifest.name) || DEV_FILE.test(rel);
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        if (spec.startsWith('node:')) usesNode = true;
        const name = packageOf(spec);
        if (!name) continue;
        if (builtinModules.includes(spec)) usesNode = true;
        if (name === manifest.name) continue;
        used.add(name);
        if (deps.has(name) || (dev && devDeps.has(name))) continue;
        if (deps.has(typesOf(name)) || (dev && devDeps.has(typesOf(name)))) continue;
        if (toolchain.has(name) && (dev || isRoot)) continue;
        const where = `${rel} imports ${name}`;
        if (devDeps.has(name)) findings.push({ pkg: manifest.name, problem: `${where}, a devDependency, in a file that ships: make it a dependency` });
        else findings.push({ pkg: manifest.name, problem: `${where}, which package.json does not declare` });
      }
    }
    if (usesNode) used.add('node');
    const scripts = scriptText(dir, manifest);
    for (const name of [...deps, ...devDeps]) {
      const byScript = binsOf(name).some((bin) => new RegExp(`(?:^|[\\s;&|(])${bin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:$|\\s)`, 'm').test(scripts));
      const isUsed = used.has(name) || byScript || (name.startsWith('@types/') && used.has(typed(name)));
      if (isUsed) toolchainUsed.add(name);
      if (isUsed || isRoot) continue;
      findings.push({ pkg: manifest.name, problem: `declares ${name} and never uses it` });
    }
    for (const name of used) if (toolchain.has(name)) toolchainUsed.add(name);
    if (isRoot) for (const name of devDeps) pending.push({ pkg: manifest.name, name });
    else for (const name of used) toolchainUsed.add(name);
    if (usesNode) toolchainUsed.add('@types/node');
  }
  // The root's toolchain is used when any package (or the root) uses it.
  for (const { pkg, name } of pending) {
    if (!toolchainUsed.has(name) && !(name.startsWith('@types/') && toolchainUsed.has(typed(name)))) findings.push({ pkg, problem: `declares ${name} and nothing uses it` });
  }
  return findings;
}

if (process.argv[1] && dirname(process.argv[1]) === import.meta.dirname) {
  const findings = check();
  for (const f of findings) console.error(`${f.pkg}: ${f.problem}`);
  if (findings.length > 0) {
    console.error(`check-dependencies: ${findings.length} problem(s); declare what a package imports (a file that ships: in dependencies), remove what it does not`);
    process.exit(1);
  }
  console.log('check-dependencies: every package declares what it imports and imports what it declares');
}
