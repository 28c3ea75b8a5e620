/**
 * `trawl demo` (what `npm start` runs): the stack and every service up, an API key at hand, a
 * depth-2 crawl of the bundled demo job board followed live, a summary, and where to look next.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { endpoints, redactUrl, stackEnvFile } from '@trawl/streams';
import { JOB_BOARD_SPEC } from '@trawl/demo-site';
import { ApiClient, ApiRequestError, apiBaseUrl } from '../lib/api-client.ts';
import { CliError } from '../lib/cli-error.ts';
import { styleFor } from '../lib/format.ts';
import { apiKeyFile } from '../lib/paths.ts';
import { isInstalled } from '../services/catalogue.ts';
import { crawl } from './crawl.ts';
import { createKey } from './keys.ts';
import { demoPort, up, waitForHttp } from './up.ts';

export function demoUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `http://127.0.0.1:${demoPort(env)}/jobs?page=1`;
}

/** The saved demo key when the API still accepts it, else a new one for user `demo`. */
async function ensureKey(): Promise<ApiClient> {
  if (process.env.TRAWL_API_KEY) return ApiClient.fromEnv();
  const file = apiKeyFile();
  if (existsSync(file)) {
    const client = new ApiClient(apiBaseUrl(), readFileSync(file, 'utf8').trim());
    try {
      await client.ok(client.http.GET('/jobs', { params: { query: { limit: 1 } } }));
      return client;
    } catch (err) {
      if (!(err instanceof ApiRequestError && err.status === 401)) throw err;
    }
  }
  const { key } = await createKey('demo', 'trawl demo');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, key + '\n', { mode: 0o600 });
  const client = new ApiClient(apiBaseUrl(), key);
  // The API learns of a new key by a Postgres notification, milliseconds after its commit.
  for (const deadline = Date.now() + 10_000; ; ) {
    try {
      await client.ok(client.http.GET('/jobs', { params: { query: { limit: 1 } } }));
      return client;
    } catch (err) {
      if (!(err instanceof ApiRequestError && err.status === 401) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export const DEMO_WEBSITE = 'demo-job-board';

/**
 * The demo board as a website (spider) of the demo user, so the crawl extracts job items with its
 * selectors and follows its "next" links. Another user holding the id is no reason to fail the
 * demo: it then crawls without a spider (links only, no items).
 */
async function ensureDemoWebsite(api: ApiClient, url: string): Promise<string | undefined> {
  try {
    const body = {
      name: 'Demo job board',
      base_url: new URL('/', url).href,
      max_depth: 2,
      ...JOB_BOARD_SPEC,
      // The spec's lists are read-only; the request body's type wants arrays of its own.
      item_fields: JOB_BOARD_SPEC.item_fields.map((f) => ({ ...f, transforms: [...f.transforms] })),
      include_patterns: [...JOB_BOARD_SPEC.include_patterns],
      exclude_patterns: [...JOB_BOARD_SPEC.exclude_patterns],
    };
    await api.ok(api.http.PUT('/websites/{id}', { params: { path: { id: DEMO_WEBSITE } }, body }));
    return DEMO_WEBSITE;
  } catch (err) {
    if (err instanceof ApiRequestError && (err.code === 'ID_TAKEN' || err.code === 'READ_ONLY_RESOURCE')) return undefined;
    throw err;
  }
}

export async function demo(): Promise<number> {
  const err = process.stderr;
  const s = styleFor(err);
  await up();
  if (!isInstalled('api')) throw new CliError('apps/services/api is missing: the demo needs the API');
  const url = demoUrl();
  if (!(await waitForHttp(url, 30_000))) throw new CliError(`the demo site does not answer at ${url} (see .trawl/logs/demo-site.log)`);
  const api = await ensureKey();

  const spider = await ensureDemoWebsite(api, url);

  err.write(`\n${s.bold('Crawling the demo job board')} ${url} (depth 2${spider ? `, spider ${spider}` : ''})\n`);
  const status = await crawl(api, url, { depth: 2, fresh: true, follow: true, ...(spider ? { spider } : {}) });

  const base = apiBaseUrl();
  const ep = endpoints();
  const where = [
    '',
    s.bold('Where to look next'),
    `  web console    ${base}/            (log in with the key in ${apiKeyFile()}; user "demo")`,
    `  API            ${base}`,
    `  OpenAPI docs   ${base}/docs`,
    `  live feed      ${base.replace(/^http/, 'ws')}/events?access_token=<key>   (WebSocket)`,
    `  this job       npx trawl logs ${status?.job_id ?? '<id>'}   ·   ${base}/jobs/${status?.job_id ?? '<id>'}/items?format=csv`,
    `  jobs           npx trawl jobs`,
    `  metrics        ${base}/metrics   (Prometheus; send the key as a Bearer token)`,
    `  dashboards     ${base}/#/metrics   ·   SQL in infra/clickhouse/dashboards/ against ${redactUrl(ep.clickhouseReadUrl)} (database ${ep.clickhouseDatabase}; credentials in ${stackEnvFile()})`,
    `  logs           .trawl/logs/   ·   stop everything: npx trawl down`,
  ];
  process.stdout.write(where.join('\n') + '\n');
  return status && status.status === 'finished' ? 0 : 1;
}
