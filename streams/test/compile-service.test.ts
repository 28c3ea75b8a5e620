import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AVRO_DIR } from '@trawl/schemas';
import { repoRoot } from '../src/config/endpoints.ts';
import { compileService, COMPILED_MAIN } from '../src/service/compile-service.ts';

const APP = join(import.meta.dirname, 'fixtures', 'compiled-app');
const out = mkdtempSync(join(tmpdir(), 'trawl-compile-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('compileService', () => {
  it('bundles main.ts and each *-thread.ts; the result runs under plain node with source-relative paths intact', async () => {
    const compiled = await compileService(APP, out);
    expect(compiled.main).toBe(join(out, COMPILED_MAIN));
    expect(compiled.files.map((f) => basename(f)).sort()).toEqual(['echo-thread.mjs', 'echo-thread.mjs.map', 'main.mjs', 'main.mjs.map']);

    const bundle = readFileSync(compiled.main, 'utf8');
    expect(bundle).not.toMatch(/from ["']@trawl\//); // workspace packages are inside
    expect(bundle).toMatch(/from "\/[^"]*\/node_modules\/pino\/[^"]+"/); // npm packages: the file Node would load

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
    });
  });

  it('refuses a folder without src/main.ts, saying so', async () => {
    await expect(compileService(join(APP, 'src'), out)).rejects.toThrow(/has no src\/main\.ts/);
  });
});
