/**
 * A whole Trawl for the console's end-to-end test: @trawl/e2e's Pipeline (own topics, own
 * Postgres database) with frontier, worker, both projectors and the API as child processes, a
 * throw-away ClickHouse database, and API keys minted by the real CLI (`trawl keys create`).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pipeline, type AppName } from '@trawl/e2e';
import { authHeaders, endpoints, httpTarget, operatorPortVariable, repoRoot, trawlHome } from '@trawl/streams';

export interface ConsoleStack {
  readonly pipeline: Pipeline;
  readonly baseUrl: string;
  readonly clickhouseDatabase: string;
  /** A key for `user`, printed by `trawl keys create`. */
  key(user: string): Promise<string>;
  /** Calls the API with a key. */
  api<T = unknown>(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Rows from the test's ClickHouse database. */
  ch<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitForHttp(url: string, timeoutMs: number, pipeline: Pipeline): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    const api = pipeline.children.find((c) => c.app === 'api');
    if (api && api.process.exitCode !== null) throw new Error(`the API exited with ${api.process.exitCode}; see .trawl/logs/e2e/${pipeline.prefix}api-*.log`);
    if (Date.now() > until) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** A projector in the pipeline's consumer-group namespace (see namespaced-projector.ts), killed with the pipeline. */
function spawnProjector(pipeline: Pipeline, which: 'pg' | 'ch'): void {
  const app: AppName = which === 'pg' ? 'projector-pg' : 'projector-ch';
  const logDir = join(trawlHome(), 'logs', 'e2e');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${pipeline.prefix}${app}-${pipeline.children.length}.log`);
  const log = createWriteStream(logFile);
  const script = join(dirname(fileURLToPath(import.meta.url)), 'namespaced-projector.ts');
  const proc = spawn(process.execPath, ['--import', 'tsx', script, which], {
    cwd: repoRoot,
    // No operator port: nothing here scrapes it, and two projectors side by side would contend for one.
    env: { ...process.env, TRAWL_LOG_LEVEL: 'info', ...pipeline.env, [operatorPortVariable(app)]: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout.pipe(log);
  proc.stderr.pipe(log);
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  pipeline.children.push({ app, process: proc, exited, operatorUrl: null, logFile });
}

export async function startConsoleStack(env: Readonly<Record<string, string>> = {}): Promise<ConsoleStack> {
  const clickhouseDatabase = `trawl_e2e_console_${randomBytes(4).toString('hex')}`;
  const pipeline = await Pipeline.start({ env: { CLICKHOUSE_DATABASE: clickhouseDatabase, ...env } });
  const port = await freePort();
  spawnProjector(pipeline, 'pg');
  spawnProjector(pipeline, 'ch');
  pipeline.spawn('frontier');
  pipeline.spawn('worker');
  pipeline.spawn('api', { TRAWL_API_PORT: String(port), TRAWL_API_HOST: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${baseUrl}/readyz`, 90_000, pipeline);
  const chUrl = endpoints().clickhouseUrl;

  return {
    pipeline,
    baseUrl,
    clickhouseDatabase,
    key: (user) => pipeline.createKey(user),
    async api<T>(key: string, method: string, path: string, body?: unknown) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    },
    async ch<T>(sql: string) {
      const ch = httpTarget(chUrl);
      const u = new URL(ch.url);
      u.searchParams.set('database', clickhouseDatabase);
      const res = await fetch(u, { method: 'POST', body: `${sql}\nFORMAT JSONEachRow`, headers: authHeaders(chUrl) });
      const text = await res.text();
      if (!res.ok) throw new Error(text);
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);
    },
    async stop() {
      await pipeline.stop();
      await fetch(httpTarget(chUrl).url, { method: 'POST', body: `DROP DATABASE IF EXISTS ${clickhouseDatabase}`, headers: authHeaders(chUrl) }).catch(() => undefined);
    },
  };
}

