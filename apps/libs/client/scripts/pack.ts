/**
 * `npm run pack -w @trawl/client [-- <destination folder>]`: the client as a package that leaves
 * the workspace, an npm tarball (`trawl-client-<version>.tgz`, in `dist/` by default) with built
 * JavaScript and its type declarations, which any project installs with npm.
 *
 * The workspace's own manifest points at TypeScript source (`src/index.ts`), which the CLI, the
 * console and their tests load as it is, with no build to forget; outside the repository Node
 * loads no TypeScript from node_modules. So the package is staged in `dist/package/`: `lib/`
 * compiled by `tsconfig.build.json` (ES2022 modules, `.d.ts` beside each file), the document
 * (`openapi.json`), the README, and a manifest made from this one with `exports` to `lib/`, its
 * runtime dependency (openapi-fetch) and nothing of the workspace. `npm pack` packs that folder.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const PACKAGE = join(import.meta.dirname, '..');
const STAGE = join(PACKAGE, 'dist', 'package');
const ROOT_BIN = join(PACKAGE, '..', '..', '..', 'node_modules', '.bin');

interface Manifest {
  name: string;
  version: string;
  description: string;
  type: string;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
}

/** `.d.ts` files keep the source's `./x.ts` specifiers; older TypeScript resolves only `./x.js` there. */
function rewriteDeclarationSpecifiers(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) rewriteDeclarationSpecifiers(path);
    else if (entry.name.endsWith('.d.ts')) {
      writeFileSync(path, readFileSync(path, 'utf8').replace(/(from\s+['"]\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1.js$2'));
    }
  }
}

export function stage(): string {
  rmSync(join(PACKAGE, 'dist'), { recursive: true, force: true });
  execFileSync(join(ROOT_BIN, 'tsc'), ['-p', join(PACKAGE, 'tsconfig.build.json')], { cwd: PACKAGE, stdio: 'inherit' });
  rewriteDeclarationSpecifiers(join(STAGE, 'lib'));
  const own = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as Manifest;
  const manifest = {
    name: own.name,
    version: own.version,
    description: own.description,
    type: own.type,
    engines: own.engines,
    exports: {
      '.': { types: './lib/index.d.ts', default: './lib/index.js' },
      './openapi.json': './openapi.json',
    },
    types: './lib/index.d.ts',
    files: ['lib', 'openapi.json'],
    sideEffects: false,
    dependencies: own.dependencies,
  };
  writeFileSync(join(STAGE, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(join(PACKAGE, 'README.md'), join(STAGE, 'README.md'));
  copyFileSync(join(PACKAGE, 'openapi.json'), join(STAGE, 'openapi.json'));
  return STAGE;
}

/** Stages the package and packs it into `destination`; the tarball's path. */
export function pack(destination = join(PACKAGE, 'dist')): string {
  const staged = stage();
  mkdirSync(destination, { recursive: true });
  const out = execFileSync('npm', ['pack', staged, '--pack-destination', resolve(destination), '--json'], { cwd: PACKAGE, encoding: 'utf8' });
  const [{ filename }] = JSON.parse(out) as [{ filename: string }];
  return join(resolve(destination), filename);
}

if (process.argv[1] === import.meta.filename) {
  console.log(pack(process.argv[2]));
}
