/**
 * Hostile tenants (invariant 9, issue 32): one pipeline on the real stack — API, frontier, one
 * worker that both users share, projector-pg — and two users. The bystander crawls a generated site
 * alone first, then again while the other user attacks through the public API; each attack must hit
 * its limit, and the bystander's crawl must still complete whole. The figures are printed as a
 * table (attack, limit hit, the bystander's crawl time beside it against alone); the speed targets
 * themselves are benchmark figures, not asserted here, except a bound far below what an attack
 * did before its limit existed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { PageFailed } from '@trawl/schemas';
import type { Child, Pipeline } from '../src/pipeline.ts';
import { apiClient, type Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

const BYSTANDER_PAGES = 600;
/** Pages of 40,000 sibling elements: `b:nth-last-child(3)` (a selector the API accepts) costs ~10 s of CPU on each. */
const HOSTILE_SIBLINGS = 40_000;
const HOSTILE_PAGES = 3;
const PARSE_TIMEOUT_MS = 2_000;

interface Row {
  readonly attack: string;
  readonly limit: string;
  readonly bystander: string;
}
const table: Row[] = [];

let site: TestSite;
let hostileSite: Server;
let hostileOrigin: string;
let pipeline: Pipeline;
let worker: Child;
let base: string;

let bystander: Api;
let attacker: Api;

let until: Until;

const client = (key: string): Api => apiClient(base, key);

const TERMINAL = new Set(['finished', 'failed', 'cancelled']);

/** Submits a crawl and waits until its job is over in the read model; its status and the time taken. */
/**
 * A crawl, from its submission until its status is over and its page counters hold at least
 * `pages` outcomes: projector-pg reads `trawl.jobs` and `trawl.pages` as two topics, so a job's
 * JobCompleted can be projected a moment before its last page's outcome.
 */
async function crawl(api: Api, body: Record<string, unknown>, pages = 1): Promise<{ jobId: string; ms: number; status: Record<string, unknown> }> {
  const started = performance.now();
  const submitted = await api('POST', '/crawl', body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const outcomes = (r: { body: Record<string, unknown> }) => { const c = counters(r.body); return (c?.pages_fetched ?? 0) + (c?.pages_failed ?? 0); };
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => TERMINAL.has(r.body.status as string) && outcomes(r) >= pages, 240_000, `job ${jobId} over`);
  return { jobId, ms: performance.now() - started, status: status.body };
}

const bystanderCrawl = () => crawl(bystander, { start_urls: [site.home], depth: 10, max_pages: BYSTANDER_PAGES * 2, ignore_cache: true }, BYSTANDER_PAGES);

/** The bystander's crawl run beside `attack`: it must be whole; its time against alone goes to the table. */
async function beside<T>(attack: () => Promise<T>): Promise<{ attack: T; jobId: string; ms: number; text: string }> {
  const [result, crawled] = await Promise.all([attack(), bystanderCrawl()]);
  expect(crawled.status.status).toBe('finished');
  expect(counters(crawled.status)).toMatchObject({ pages_fetched: BYSTANDER_PAGES, pages_failed: 0 });
  return { attack: result, jobId: crawled.jobId, ms: crawled.ms, text: `${BYSTANDER_PAGES} pages in ${(crawled.ms / 1000).toFixed(2)} s (${(crawled.ms / soloMs).toFixed(2)}× alone)` };
}

/** The error codes of a job's PageFailed events. */
async function failureCodes(jobId: string): Promise<(string | null)[]> {
  return (await pipeline.events()).filter((e) => e.event.name === 'PageFailed' && (e.event.value as PageFailed).job_id === jobId).map((e) => (e.event.value as PageFailed).error_code);
}

async function saveWebsite(api: Api, body: Record<string, unknown>): Promise<string> {
  const saved = await api('POST', '/websites', { id: `w-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, base_url: `${hostileOrigin}/`, ...body });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  return saved.body.id as string;
}
const counters = (status: Record<string, unknown>) => status.counters as { pages_fetched: number; pages_failed: number; items_extracted: number } | undefined;

beforeAll(async () => {
  site = await createTestSite({ pages: BYSTANDER_PAGES, linksPerPage: 4, itemsPerPage: 1, traps: false });
  const pages: Record<string, Buffer> = {
    // 40,000 siblings, for a selector whose cost grows with the square of their number.
    '/page': Buffer.from(`<!doctype html><html><body><div>${'<b>x</b>'.repeat(HOSTILE_SIBLINGS)}</div></body></html>`),
    // Links that make a backtracking engine run for hours under `^https?://[^/]+/(a+)+$`.
    '/links': Buffer.from(`<!doctype html><html><body>${Array.from({ length: 200 }, (_, i) => `<a href="/${'a'.repeat(40 + (i % 5))}!${i}">x</a>`).join('')}</body></html>`),
    // 500 item roots nested in each other, ~20 KB of text each (9.6 MB): every root re-read the page below it.
    '/bomb': Buffer.from(`<!doctype html><html><body>${`<div class="item"><h2>t</h2>${'lorem ipsum '.repeat(1_600)}`.repeat(500)}${'</div>'.repeat(500)}</body></html>`),
  };
  hostileSite = createServer((req, res) => {
    const body = pages[(req.url ?? '').replace(/\/\d+$/, '')];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => hostileSite.listen(0, '127.0.0.1', resolve));
  hostileOrigin = `http://127.0.0.1:${(hostileSite.address() as AddressInfo).port}`;

  // The two sites alone are open to the crawls: the stack's own ports stay refused.
  const allow = [site.port, (hostileSite.address() as AddressInfo).port].map((port) => `127.0.0.1:${port}`).join(',');
  let keys: readonly string[];
  ({ pipeline, base, worker, keys, until } = await startApiPipeline({
    env: { TRAWL_PARSE_TIMEOUT_MS: String(PARSE_TIMEOUT_MS), TRAWL_FETCH_ALLOW: allow },
    users: ['bystander', 'attacker'],
    pollMs: 100,
  }));
  [bystander, attacker] = keys.map(client) as [Api, Api];
}, 240_000);

afterAll(async () => {
  if (table.length > 0) {
    console.log('\nHOSTILE TENANTS\n| attack | limit hit | bystander\'s crawl |\n|---|---|---|');
    for (const r of table) console.log(`| ${r.attack} | ${r.limit} | ${r.bystander} |`);
  }
  await pipeline?.stop();
  await site?.close();
  await new Promise((resolve) => hostileSite?.close(resolve));
});

let soloMs = 0;

describe('hostile tenants against a bystander on the same worker', () => {
  it('the bystander alone: the figure the attacks are compared with', async () => {
    // A first crawl warms the worker (its parse threads and connections), then the median of three.
    await bystanderCrawl();
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const solo = await bystanderCrawl();
      expect(solo.status.status).toBe('finished');
      expect(counters(solo.status)?.pages_fetched).toBe(BYSTANDER_PAGES);
      times.push(solo.ms);
    }
    soloMs = times.sort((a, b) => a - b)[1]!;
    table.push({ attack: '(none: the bystander alone, median of 3)', limit: '—', bystander: `${BYSTANDER_PAGES} pages in ${(soloMs / 1000).toFixed(2)} s` });
  }, 300_000);

  it('a selector whose cost grows with the page is refused when the website is saved', async () => {
    const r = await attacker('POST', '/websites', { name: 'quadratic', base_url: `${hostileOrigin}/`, item_root: 'a:has(~ b)', item_fields: [{ name: 't', selector: '' }] });
    expect(r.status).toBe(400);
    expect((r.body.error as { code: string }).code).toBe('UNSUPPORTED_SELECTOR');
    table.push({ attack: 'website with `a:has(~ b)` (quadratic selector)', limit: '400 UNSUPPORTED_SELECTOR when saved', bystander: 'untouched (nothing runs)' });
  });

  it('a selector the check lets through, on pages built against it, fails those pages on the parse limit; the worker serves the bystander meanwhile', async () => {
    const pid = worker.process.pid;
    const spider = await saveWebsite(attacker, { name: 'slow selector', item_root: 'b:nth-last-child(3)', item_fields: [{ name: 't', selector: '' }] });
    // Three one-page crawls of the hostile pages, submitted with the bystander's crawl.
    const run = await beside(() => Promise.all(Array.from({ length: HOSTILE_PAGES }, (_, i) => crawl(attacker, { spider, start_urls: [`${hostileOrigin}/page/${i}`], depth: 0 }))));
    for (const h of run.attack) {
      expect(counters(h.status)).toMatchObject({ pages_fetched: 0, pages_failed: 1 });
      expect(await failureCodes(h.jobId)).toEqual(['TRAWL_PARSE_TIMEOUT']);
    }
    // The same worker process throughout: the loop watchdog never had to act.
    expect(worker.process.exitCode).toBeNull();
    expect(worker.process.pid).toBe(pid);
    // Without the limit each page held the worker for its whole cost (~10 s, or the watchdog's
    // kill and three deliveries each), and the bystander waited that long.
    expect(run.ms).toBeLessThan(2 * soloMs + HOSTILE_PAGES * PARSE_TIMEOUT_MS + 10_000);
    table.push({
      attack: `${HOSTILE_PAGES} pages of ${HOSTILE_SIBLINGS.toLocaleString('en')} siblings under \`b:nth-last-child(3)\` (accepted)`,
      limit: `\`TRAWL_PARSE_TIMEOUT\` after ${PARSE_TIMEOUT_MS} ms on a parse thread, the three pages one user's share of the threads; worker not restarted`,
      bystander: run.text,
    });
  }, 300_000);

  it('a catastrophic include pattern is harmless: it runs in a linear-time engine', async () => {
    const spider = await saveWebsite(attacker, { name: 'catastrophic', include_patterns: ['^https?://[^/]+/(a+)+$'], max_depth: 1 });
    const run = await beside(() => crawl(attacker, { spider, start_urls: [`${hostileOrigin}/links`], depth: 1 }));
    expect(run.attack.status.status).toBe('finished');
    expect(counters(run.attack.status)).toMatchObject({ pages_fetched: 1, pages_failed: 0 });
    table.push({ attack: 'include pattern `^https?://[^/]+/(a+)+$`, 200 links `/aaa…a!`', limit: 'RE2 (linear): every link checked in < 1 ms, none followed', bystander: run.text });
  }, 300_000);

  it('an extraction bomb (500 nested item roots in 9.6 MB) is read once and cut at the item bytes', async () => {
    const spider = await saveWebsite(attacker, { name: 'bomb', item_root: 'div.item', item_fields: [{ name: 'title', selector: 'h2' }, { name: 'all', selector: '' }] });
    const run = await beside(() => crawl(attacker, { spider, start_urls: [`${hostileOrigin}/bomb`], depth: 0 }));
    expect(counters(run.attack.status)).toMatchObject({ pages_fetched: 1, pages_failed: 0 });
    table.push({ attack: 'a 9.6 MB page of 500 nested item roots', limit: `each node read once; items cut at \`TRAWL_PARSE_MAX_ITEM_BYTES\` (${counters(run.attack.status)?.items_extracted} items kept)`, bystander: run.text });
  }, 300_000);

  it('a start URL at a port of the stack is refused, and the refusal names no address', async () => {
    const run = await beside(() => crawl(attacker, { start_urls: ['http://127.0.0.1:8123/?query=SELECT%201', 'http://127.0.0.1:9092/'], depth: 0 }));
    expect(counters(run.attack.status)?.pages_fetched).toBe(0);
    const failures = (await pipeline.events()).filter((e) => e.event.name === 'PageFailed' && (e.event.value as PageFailed).job_id === run.attack.jobId).map((e) => e.event.value as PageFailed);
    expect(failures.map((f) => f.error_code)).toEqual(['TRAWL_UNSAFE_ADDRESS', 'TRAWL_UNSAFE_ADDRESS']);
    for (const f of failures) expect(f.error_message).not.toMatch(/127\.0\.0\.1|\/8|:8123|:9092/);
    table.push({ attack: 'start URLs at ClickHouse (8123) and Kafka (9092) on 127.0.0.1', limit: '`TRAWL_UNSAFE_ADDRESS` before any byte is sent; the message names no address', bystander: run.text });
  }, 300_000);

  it('made-up keys from the bystander\'s address cost no query and lock no valid key out', async () => {
    const run = await beside(async () => {
      const statuses = await Promise.all(Array.from({ length: 600 }, (_, i) => fetch(`${base}/jobs`, { headers: { authorization: `Bearer trawl_madeup_${i}_${Math.random().toString(36).slice(2)}` }, signal: AbortSignal.timeout(30_000) }).then((r) => r.status)));
      return statuses;
    });
    expect(run.attack.every((s) => s === 401 || s === 429)).toBe(true);
    // A key made after the flood, used from the same address (every client here is 127.0.0.1).
    const fresh = client(await pipeline.createKey('bystander'));
    expect((await until(() => fresh('GET', '/jobs'), (r) => r.status !== 401, 10_000, 'the new key known to the API')).status).toBe(200);
    table.push({ attack: '600 made-up API keys from the bystander\'s address', limit: `no Postgres query for any (keys are indexed in memory); ${run.attack.filter((s) => s === 429).length} answered 429 past the failure budget; a new valid key from that address accepted at once`, bystander: run.text });
  }, 300_000);

  it('a website that asks one request a minute of a host slows its own crawl there, not the bystander\'s on the same host', async () => {
    // The attacker crawls the bystander's own site with the strictest politeness a website may ask.
    const spider = await saveWebsite(attacker, { name: 'strict', base_url: `${site.origin}/`, host_delay_ms: 60_000, host_concurrency: 1, max_depth: 1 });
    const run = await beside(async () => {
      const submitted = await attacker('POST', '/crawl', { spider, start_urls: [site.home], depth: 1 });
      expect(submitted.status).toBe(200);
      return submitted.body.job_id as string;
    });
    // The strict job is still waiting for its second request; cancel it.
    expect((await attacker('POST', `/jobs/${run.attack}/cancel`)).status).toBeLessThan(300);
    table.push({ attack: 'a website with `host_delay_ms: 60000, host_concurrency: 1` crawling the bystander\'s host', limit: 'the spacing binds that job\'s own fetches (per host and job); only robots.txt, 429s and the operator\'s caps bind everyone', bystander: run.text });
  }, 300_000);

  it('webhook subscriptions past the quota are refused', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      const r = await attacker('POST', '/webhooks', { url: `${hostileOrigin}/hook/${i}`, events: ['job.completed'], secret: 'a-secret-of-sixteen-chars' });
      statuses.push(r.status);
    }
    // The hostile site's port is open to crawls (TRAWL_FETCH_ALLOW), so its URLs are valid targets.
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(201));
    expect(statuses[20]).toBe(429);
    table.push({ attack: '21 webhook subscriptions', limit: 'the 21st refused 429 `QUOTA_EXCEEDED` (`webhooks`, 20 by default)', bystander: 'untouched (nothing runs)' });
  });

  it('a burst of /readyz without a key costs the backends one round of checks and is cut at its budget', async () => {
    const run = await beside(async () => {
      const answers = await Promise.all(Array.from({ length: 400 }, () => fetch(`${base}/readyz`, { signal: AbortSignal.timeout(30_000) }).then((r) => r.status)));
      return answers;
    });
    // Never refused (a balancer's probes share addresses); past the budget the last round answers.
    expect(run.attack.every((s) => s === 200 || s === 503)).toBe(true);
    table.push({ attack: '400 `/readyz` at once, no key', limit: 'one cached round of checks for the burst; past `TRAWL_API_HEALTH_RATE_LIMIT` the last round answers, no check runs', bystander: run.text });
  }, 300_000);
});
