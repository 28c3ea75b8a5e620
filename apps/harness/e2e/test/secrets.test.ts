/**
 * Invariant 10 for a crawl's credentials, end to end through the public API (issue 33, secrets): a
 * site that answers only with a given API key header and session cookie is crawled with both taken
 * from the user's secrets (and one literal header); then every record of every topic of the
 * pipeline (decoded and as raw bytes), every table of its Postgres database and of its ClickHouse
 * database, every service's log and every answer of the API are searched for the values — none
 * holds one. Another user neither sees the secrets nor can use them: naming one is 400
 * UNKNOWN_SECRET and stores nothing.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobDispatched } from '@trawl/schemas';
import { endpoints, httpTarget } from '@trawl/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

// Random per run: a value found anywhere can only have come from this test's crawl.
const KEY_VALUE = `k-${randomBytes(9).toString('hex')}`;
const COOKIE_VALUE = `c-${randomBytes(9).toString('hex')}`;
const LITERAL_VALUE = `l-${randomBytes(9).toString('hex')}`;
const PAGES = 3;

let site: Server;
let origin: string;
let pipeline: Pipeline;
let base: string;
let owner: string;
let stranger: string;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
/** Every answer of the API in this test, as received. */
const answers: string[] = [];

function admitted(h: IncomingHttpHeaders): boolean {
  return h['x-api-key'] === KEY_VALUE && h['x-literal'] === LITERAL_VALUE && (h.cookie ?? '').split('; ').includes(`sid=${COOKIE_VALUE}`);
}

async function call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  answers.push(`${method} ${path} ${res.status} ${JSON.stringify([...res.headers])} ${text}`);
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

let until: Until;

/** The spellings a value could be kept in: as is, base64, hex. */
function forms(value: string): string[] {
  const b = Buffer.from(value);
  return [value, b.toString('base64'), b.toString('base64url'), b.toString('hex')];
}
const SECRETS = [KEY_VALUE, COOKIE_VALUE, LITERAL_VALUE].flatMap(forms);

/** Which of the secrets' spellings `text` holds (none, hopefully). */
function leaks(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s));
}

/** Every record of every topic of the pipeline, raw: key, value and headers as bytes (latin1, so any byte sequence is searchable). */
async function rawRecords(): Promise<Map<string, string[]>> {
  const admin = pipeline.kafka.admin();
  await admin.connect();
  const wanted = new Map<string, Map<number, bigint>>();
  try {
    for (const { name } of pipeline.topics.specs) {
      const offsets = await admin.fetchTopicOffsets(name);
      const ends = new Map(offsets.filter((o) => BigInt(o.high) > BigInt(o.low)).map((o) => [o.partition, BigInt(o.high) - 1n]));
      if (ends.size > 0) wanted.set(name, ends);
    }
  } finally {
    await admin.disconnect();
  }
  const records = new Map<string, string[]>();
  if (wanted.size === 0) return records;
  const consumer = pipeline.kafka.consumer({ groupId: `${pipeline.prefix}secrets-scan-${randomBytes(3).toString('hex')}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...wanted.keys()], fromBeginning: true });
    let idleSince = Date.now();
    const left = new Set([...wanted].flatMap(([t, ends]) => [...ends.keys()].map((p) => `${t}/${p}`)));
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        idleSince = Date.now();
        const text = [message.key, message.value, ...Object.entries(message.headers ?? {}).flatMap(([k, v]) => [Buffer.from(k), ...(Array.isArray(v) ? v : [v])])]
          .map((b) => (b === null || b === undefined ? '' : Buffer.isBuffer(b) ? b.toString('latin1') : String(b)))
          .join('\u0000');
        records.set(topic, [...(records.get(topic) ?? []), text]);
        if (BigInt(message.offset) >= wanted.get(topic)!.get(partition)!) left.delete(`${topic}/${partition}`);
      },
    });
    // Transaction markers take offsets no message has: a partition whose last record is one is done once nothing comes for a while.
    const deadline = Date.now() + 60_000;
    while (left.size > 0 && Date.now() < deadline && Date.now() - idleSince < 5_000) await new Promise((r) => setTimeout(r, 200));
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** Every row of every table of the pipeline's Postgres database, as text. */
async function postgresRows(): Promise<Map<string, string>> {
  const { rows: tables } = await pipeline.db.pool.query<{ schema: string; name: string }>(
    "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
  );
  const out = new Map<string, string>();
  for (const t of tables) {
    const { rows } = await pipeline.db.pool.query<{ row: string }>(`SELECT t::text AS row FROM "${t.schema}"."${t.name}" t`);
    out.set(`${t.schema}.${t.name}`, rows.map((r) => r.row).join('\n'));
  }
  return out;
}

async function clickhouse(query: string): Promise<string> {
  const ch = httpTarget(endpoints().clickhouseUrl);
  const res = await fetch(ch.url, { method: 'POST', body: query, headers: ch.authorization ? { authorization: ch.authorization } : {}, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse: ${res.status} ${text}`);
  return text;
}

/** Every row of every table of the pipeline's ClickHouse database, as JSON lines. */
async function clickhouseRows(): Promise<Map<string, string>> {
  const database = pipeline.env.CLICKHOUSE_DATABASE!;
  const names = (await clickhouse(`SELECT name FROM system.tables WHERE database = '${database}' AND engine NOT LIKE '%View%' FORMAT TSV`)).split('\n').filter(Boolean);
  const out = new Map<string, string>();
  for (const name of names) out.set(name, await clickhouse(`SELECT * FROM \`${database}\`.\`${name}\` FORMAT JSONEachRow`));
  return out;
}

beforeAll(async () => {
  site = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push({ path, headers: req.headers });
    if (path === '/robots.txt') return void res.writeHead(404).end();
    if (!admitted(req.headers)) return void res.writeHead(403, { 'content-type': 'text/html' }).end('<p>forbidden</p>');
    const links = Array.from({ length: PAGES - 1 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join('');
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body><h1>${path}</h1>${path === '/' ? links : ''}</body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const port = (site.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  let keys: readonly string[];
  ({ pipeline, base, keys, until } = await startApiPipeline({ env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${port}` }, users: ['secret-owner', 'secret-stranger'], projectorCh: true }));
  [owner, stranger] = keys as [string, string];
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await new Promise((resolve) => site?.close(resolve));
});

const crawlBody = () => ({
  start_urls: [`${origin}/`], depth: 1, sitemap: 'skip', ignore_cache: true,
  headers: { 'X-Api-Key': { secret: 'site-key' }, 'X-Literal': LITERAL_VALUE },
  cookies: { '127.0.0.1': [{ secret: 'site-session' }] },
});

describe("a crawl with the user's secrets", () => {
  let jobId: string;

  it('stores the secrets write-only and crawls the site with them', async () => {
    expect((await call(owner, 'POST', '/secrets', { name: 'site-key', value: KEY_VALUE })).status).toBe(201);
    expect((await call(owner, 'POST', '/secrets', { name: 'site-session', value: `sid=${COOKIE_VALUE}; Path=/` })).status).toBe(201);
    const listed = await call(owner, 'GET', '/secrets');
    expect((listed.body.secrets as { name: string }[]).map((s) => s.name)).toEqual(['site-key', 'site-session']);

    const submitted = await call(owner, 'POST', '/crawl', crawlBody());
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    jobId = submitted.body.job_id as string;
    const status = await until(() => call(owner, 'GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 120_000, `job ${jobId} over`);
    expect(status.body).toMatchObject({ status: 'finished', counters: { pages_fetched: PAGES, pages_failed: 0 } });
    const pages = seen.filter((s) => s.path !== '/robots.txt');
    expect(pages).toHaveLength(PAGES);
    for (const s of pages) expect(admitted(s.headers), s.path).toBe(true);
    // Read back through the API as a user would: the job and its pages.
    await call(owner, 'GET', `/jobs/${jobId}`);
    await call(owner, 'GET', `/jobs/${jobId}/pages`);
  }, 180_000);

  it('another user does not see the secrets and cannot use them: 400 UNKNOWN_SECRET, nothing stored', async () => {
    expect((await call(stranger, 'GET', '/secrets')).body).toEqual({ secrets: [] });
    const refused = await call(stranger, 'POST', '/crawl', crawlBody());
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'UNKNOWN_SECRET', field: 'headers.X-Api-Key' });
    expect((await call(stranger, 'DELETE', '/secrets/site-key')).status).toBe(404);
    const { rows } = await pipeline.db.pool.query(
      "SELECT (SELECT count(*) FROM api_jobs WHERE user_id = $1)::int + (SELECT count(*) FROM crawl_dedupe WHERE user_id = $1)::int AS n",
      ['secret-stranger'],
    );
    expect(rows[0].n).toBe(0);
    const events = await pipeline.events();
    expect(events.filter((e) => JSON.stringify(e.event.value).includes(origin)).every((e) => (e.event.value as { job_id?: string }).job_id === jobId)).toBe(true);
  }, 60_000);

  it('leaves no secret in clear in any topic, table, log or answer', async () => {
    // The read models have the job (projector-pg, projector-ch) before they are searched.
    await until(async () => (await pipeline.db.pool.query('SELECT count(*)::int AS n FROM job_pages WHERE job_id = $1', [jobId])).rows[0].n, (n) => n === PAGES, 60_000, 'the pages in Postgres');
    await until(async () => [...(await clickhouseRows()).values()].some((rows) => rows.includes(jobId)), (found) => found, 60_000, 'the job in ClickHouse');

    // Decoded events: the spec carries the credentials sealed, so the search below is a real one.
    const events = await pipeline.events();
    const dispatched = events.find((e) => e.event.name === 'JobDispatched' && (e.event.value as { job_id: string }).job_id === jobId)!.event.value as JobDispatched;
    expect(dispatched.spec.headers['x-api-key']).toMatch(/^tsec1\./);
    expect(dispatched.spec.headers['x-literal']).toMatch(/^tsec1\./);
    expect(dispatched.spec.cookies['127.0.0.1']![0]).toMatch(/^tsec1\./);
    expect(leaks(JSON.stringify(events.map((e) => e.event.value)))).toEqual([]);

    const raw = await rawRecords();
    // The scan reads the records: the job's id is in them, the secrets are not.
    expect([...raw.values()].flat().some((r) => r.includes(jobId))).toBe(true);
    expect([...raw.keys()]).toEqual(expect.arrayContaining([pipeline.topics.jobs, pipeline.topics.fetch, pipeline.topics.pages]));
    for (const [topic, records] of raw) expect(leaks(records.join('\n')), topic).toEqual([]);

    const tables = await postgresRows();
    expect(tables.get('public.user_secrets')).toMatch(/tsec1\./);
    expect(tables.get('public.crawl_specs')).toMatch(/tsec1\./);
    expect(tables.get('public.job_pages')).toContain(origin);
    for (const [table, rows] of tables) expect(leaks(rows), table).toEqual([]);

    for (const [table, rows] of await clickhouseRows()) expect(leaks(rows), `clickhouse ${table}`).toEqual([]);

    for (const child of pipeline.children) expect(leaks(readFileSync(child.logFile, 'utf8')), `${child.app} log`).toEqual([]);

    await call(owner, 'GET', '/secrets');
    expect(answers.length).toBeGreaterThan(5);
    expect(leaks(answers.join('\n'))).toEqual([]);
  }, 180_000);
});
