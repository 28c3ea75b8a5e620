import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AVRO_DIR } from '@trawl/schemas';
import { repoRoot } from '@trawl/base';
import { compileService, COMPILED_MAIN } from '../src/service/compile-service.ts';

const APP = join(import.meta.dirname, 'fixtures', 'compiled-app');
const out = mkdtempSync(join(tmpdir(), 'trawl-compile-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('compileService', () => {
  it('bundles main.ts and each *-thread.ts; the result runs under plain node with source-relative paths intact', async () => {
    const compiled = await compileService(APP, out);
    expect(compiled.main).toBe(join(out, COMPILED_MAIN));
    const [lazyChunk, ...others] = compiled.files.filter((f) => f.includes('/chunks/') && f.endsWith('.mjs'));
    expect(compiled.files.filter((f) => !f.includes('/chunks/')).map((f) => basename(f)).sort()).toEqual(['echo-thread.mjs', 'echo-thread.mjs.map', 'main.mjs', 'main.mjs.map']);
    // What main.ts imports dynamically is a chunk of its own, with its npm package: loaded only when imported.
    expect(others).toEqual([]);
    expect(readFileSync(lazyChunk!, 'utf8')).toMatch(/from "\/[^"]*\/node_modules\/esbuild\/[^"]+"/);

    const bundle = readFileSync(compiled.main, 'utf8');
    expect(bundle).not.toMatch(/from ["']@trawl\//); // workspace packages are inside
    expect(bundle).toMatch(/from "\/[^"]*\/node_modules\/pino\/[^"]+"/); // npm packages: the file Node would load
    expect(bundle).not.toMatch(/node_modules\/esbuild\//);

    // No tsx anywhere: a plain node process, run from elsewhere.
    const run = spawnSync(process.execPath, [compiled.main], { cwd: tmpdir(), encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const printed = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(printed).toEqual({
      greeting: 'compiled',
      avroDir: AVRO_DIR,
      avroDirExists: true,
      repoRoot,
      ownUrl: pathToFileURL(join(APP, 'src', 'main.ts')).href,
      pino: 'function',
      echoed: 'echo:ping',
      lazy: 'string',
    });
  });

  it('refuses a folder without src/main.ts, saying so', async () => {
    await expect(compileService(join(APP, 'src'), out)).rejects.toThrow(/has no src\/main\.ts/);
  });
});
