/**
 * The committed document (`openapi.json`) and types (`src/generated/openapi.ts`) are what the API
 * gives now. The live document is the API's own, built offline in a child process
 * (`npm run --silent openapi -w @trawl/api`): the client is generated from the document, never from
 * the API's code. Its types are made by openapi-typescript, as `npm run generate` makes them. A
 * route whose schema changed without `npm run generate -w @trawl/client` fails here.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonDifferences } from './support/json-differences.ts';

const run = promisify(execFile);
const PACKAGE = join(import.meta.dirname, '..');
const REGENERATE = 'the API changed: run `npm run generate -w @trawl/client` and commit what it writes';

let live: string;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'trawl-client-'));
  // Stack endpoints that answer nothing: the document must not need one.
  const env = { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', TRAWL_LOG_LEVEL: 'silent' };
  ({ stdout: live } = await run('npm', ['run', '--silent', 'openapi', '-w', '@trawl/api'], { cwd: PACKAGE, env, maxBuffer: 64 * 1024 * 1024 }));
}, 240_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('@trawl/client is generated from the live document', () => {
  it('openapi.json is the document the API serves', () => {
    const committed: unknown = JSON.parse(readFileSync(join(PACKAGE, 'openapi.json'), 'utf8'));
    const differences = jsonDifferences(committed, JSON.parse(live));
    expect(differences, `${REGENERATE}; it differs at ${differences.join(', ')}`).toEqual([]);
  });

  it('src/generated/openapi.ts is what openapi-typescript makes of it', async () => {
    const doc = join(scratch, 'openapi.json');
    const types = join(scratch, 'openapi.ts');
    writeFileSync(doc, live);
    // Its binary, as `npm run generate` runs it (the package's exports map `*.js` to `*.mjs`).
    const cli = join(dirname(fileURLToPath(import.meta.resolve('openapi-typescript/package.json'))), 'bin', 'cli.js');
    await run(process.execPath, [cli, doc, '--output', types], { cwd: PACKAGE });
    const fresh = readFileSync(types, 'utf8');
    const committed = readFileSync(join(PACKAGE, 'src', 'generated', 'openapi.ts'), 'utf8');
    const firstDifference = fresh.split('\n').findIndex((line, i) => line !== committed.split('\n')[i]);
    expect(fresh === committed ? undefined : `line ${firstDifference + 1}: ${fresh.split('\n')[firstDifference]?.trim()}`, REGENERATE).toBeUndefined();
  });
});
