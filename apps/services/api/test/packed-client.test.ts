/**
 * The client generated from this API's document leaves the workspace: `npm run pack -w
 * @trawl/client` (its scripts/pack.ts) gives a tarball that a fresh project in a temporary folder
 * outside the repository installs with npm (from the npm cache or the registry: its one
 * dependency is openapi-fetch), type-checks against with TypeScript, and runs with Node against
 * this API on a real socket (the real Postgres and Kafka): a key-authenticated crawl, the caller's
 * jobs, and an error answered with its code. Nothing of the workspace is reachable from that
 * project: no workspace, no symlink. (It lives here, not in @trawl/client, whose tests cannot
 * depend on the API: the API mounts the console, which uses the client.)
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyAccepted, startTestApi, type TestApi } from './support.ts';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '..', '..', '..', '..');

/**
 * The environment without npm's own variables, so the fresh project is no workspace of this
 * repository — but with the machine's npm configuration files (`npm_config_globalconfig`,
 * `npm_config_userconfig`): a registry, proxy or CA certificate set there is the machine's, and an
 * npm run by another Node than the one that set them would not find them otherwise.
 */
const MACHINE_NPM_CONFIG = /^npm_config_(globalconfig|userconfig)$/i;
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) || MACHINE_NPM_CONFIG.test(name)));
  // A CA the machine trusts for Node (a registry reached through an intercepting proxy) is npm's
  // too: the npm running the suite may be the project's own Node's, whose global npmrc has no cafile.
  if (env.NODE_EXTRA_CA_CERTS && !env.npm_config_cafile) env.npm_config_cafile = env.NODE_EXTRA_CA_CERTS;
  return { ...env, ...extra };
}

const CONSUMER = `import { createTrawlClient, expectOk, TrawlApiError, type CrawlAccepted, type Job } from '@trawl/client';

declare const process: { env: Record<string, string | undefined>; stdout: { write(s: string): boolean } };

const trawl = createTrawlClient({ baseUrl: process.env.TRAWL_API_URL ?? '', apiKey: process.env.TRAWL_API_KEY ?? '' });

const crawl = await expectOk(trawl.POST('/crawl', { body: { start_urls: ['http://127.0.0.1:8090/packed-client'], depth: 0, max_pages: 1 } }));
if (crawl.scheduled) throw new Error('a crawl without schedule_at starts now');
const accepted: CrawlAccepted = crawl;
const listed = await expectOk(trawl.GET('/jobs', { params: { query: { limit: 10 } } }));
const jobs: Job[] = listed.jobs;
let missing: { status: number; code: string } | string = 'answered';
try {
  await expectOk(trawl.GET('/jobs/{id}/status', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } }));
} catch (err) {
  missing = err instanceof TrawlApiError ? { status: err.status, code: err.code } : String(err);
}
process.stdout.write(JSON.stringify({ job_id: accepted.job_id, jobs: jobs.map((j) => j.job_id), missing }));

/** Never called: the packed types know the API's paths and bodies. */
export function typesBite(): void {
  // @ts-expect-error the API has no such path
  void trawl.GET('/no-such-path');
  // @ts-expect-error start_urls is an array of URLs
  void trawl.POST('/crawl', { body: { start_urls: 'http://example.com/' } });
}
`;

let scratch: string;
let project: string;
let api: TestApi;
let url: string;

beforeAll(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'trawl-client-packed-')));
  if (!relative(REPO, scratch).startsWith('..')) throw new Error(`${scratch} is inside the repository`);
  const { stdout: packed } = await run('npm', ['run', '--silent', 'pack', '-w', '@trawl/client', '--', join(scratch, 'tarball')], { cwd: REPO, env: cleanEnv(), timeout: 240_000 });
  const tarball = packed.trim().split('\n').at(-1)!;
  project = join(scratch, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'trawl-client-consumer', private: true, type: 'module', dependencies: { '@trawl/client': `file:${tarball}` } }, null, 2));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: [], strict: true, noEmit: true, verbatimModuleSyntax: true }, include: ['main.ts'] }),
  );
  writeFileSync(join(project, 'main.ts'), CONSUMER);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, env: cleanEnv(), timeout: 240_000 });

  api = await startTestApi();
  url = await api.app.listen({ host: '127.0.0.1', port: 0 });
}, 300_000);

afterAll(async () => {
  await api?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the packed client, installed in a project outside the repository', () => {
  it('installs as built JavaScript and declarations, with openapi-fetch and nothing of the workspace', async () => {
    const installed = join(project, 'node_modules', '@trawl', 'client');
    // A copy, not a link back into the repository.
    expect(realpathSync(installed)).toBe(installed);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.exports).toEqual({ '.': { types: './lib/index.d.ts', default: './lib/index.js' }, './openapi.json': './openapi.json' });
    expect(Object.keys(manifest.dependencies as object)).toEqual(['openapi-fetch']);
    const { stdout } = await run('npm', ['ls', '--all', '--parseable'], { cwd: project, env: cleanEnv() });
    expect(stdout.split('\n').filter((line) => line.startsWith(REPO))).toEqual([]);
  });

  it('type-checks a program that uses it, and refuses a path or a body the API does not have', async () => {
    const tsc = join(dirname(fileURLToPath(import.meta.resolve('typescript/package.json'))), 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', project], { cwd: project }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    expect(result).toBe('');
  });

  it('calls the API with a key: creates a crawl, lists the jobs, and gets the API\'s error code', async () => {
    const { key } = await api.user('packed');
    await keyAccepted(url, key);
    // Node runs the program's TypeScript as it is (type stripping): the package is plain JavaScript.
    const { stdout } = await run(process.execPath, ['main.ts'], { cwd: project, env: cleanEnv({ TRAWL_API_URL: url, TRAWL_API_KEY: key }), timeout: 60_000 });
    const out = JSON.parse(stdout) as { job_id: string; jobs: string[]; missing: unknown };
    expect(out.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.jobs).toContain(out.job_id);
    expect(out.missing).toEqual({ status: 404, code: 'JOB_NOT_FOUND' });
  });
});
