/**
 * GET /metrics/scrape against the real ClickHouse and Postgres: the numbers are those of the facts
 * (computed here from the rows inserted, not from ClickHouse), each user sees only their own jobs,
 * and every parameter is validated before any SQL is built.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleHarness, type ConsoleHarness } from './support/console-harness.ts';
import { itemFactsTsv, jobEventsTsv, pageFactsTsv, type PageFact } from './support/fact-rows.ts';
import { scratchClickHouse, type ScratchClickHouse } from './support/clickhouse-scratch.ts';

let ch: ScratchClickHouse;
let h: ConsoleHarness;
const now = Math.floor(Date.now() / 1000);
const base = Math.floor((now - 1800) / 60) * 60; // half an hour ago, on a minute
const alice1 = randomUUID();
const alice2 = randomUUID();
const bob1 = randomUUID();
const pages: PageFact[] = [];
let aliceItems = 0;

beforeAll(async () => {
  ch = await scratchClickHouse('console_test');
  h = await consoleHarness({ clickhouse: { url: ch.url, database: ch.database } });
  await h.ownJob('alice', alice1);
  await h.ownJob('alice', alice2);
  await h.ownJob('bob', bob1);
  // alice: 3 minutes of pages on two hosts, with failures, retries and a 404; bob: one host shared with alice.
  for (let m = 0; m < 3; m++) {
    for (let i = 0; i < 10; i++) pages.push({ job_id: alice1, host: 'shop.example', status: 200, bytes: 1000 + i, fetch_ms: 10 * (i + 1), ok: 1, attempts: i === 0 ? 2 : 1, items: 2, ts: base + m * 60 + i });
    pages.push({ job_id: alice2, host: 'news.example', status: 404, bytes: 10, fetch_ms: 5, ok: 1, attempts: 1, ts: base + m * 60 + 30 });
    pages.push({ job_id: alice2, host: 'news.example', status: 503, bytes: 0, fetch_ms: 0, ok: 0, error_code: 'HTTP_STATUS', attempts: 4, ts: base + m * 60 + 40 });
  }
  const bobPages: PageFact[] = Array.from({ length: 25 }, (_, i) => ({ job_id: bob1, host: 'shop.example', status: 200, bytes: 99_999, fetch_ms: 999, ok: 1 as const, attempts: 1, ts: base + i }));
  // The same event stored twice (re-emitted at another position) counts once.
  pages.push({ ...pages[0]!, event_id: 'dup-1' }, { ...pages[0]!, event_id: 'dup-1' });
  await ch.exec(`INSERT INTO page_fetches FORMAT TabSeparated\n${pageFactsTsv([...pages, ...bobPages])}`);
  const items = pages.filter((p) => p.job_id === alice1).flatMap((p) => Array.from({ length: p.items ?? 0 }, () => ({ job_id: p.job_id, host: p.host, ts: p.ts })));
  aliceItems = items.length;
  await ch.exec(`INSERT INTO items FORMAT TabSeparated\n${itemFactsTsv([...items, ...bobPages.map((p) => ({ job_id: p.job_id, host: p.host, ts: p.ts }))])}`);
  await ch.exec(`INSERT INTO job_events FORMAT TabSeparated\n${jobEventsTsv([{ job_id: alice1, user_id: 'alice', ts: base }, { job_id: alice2, user_id: 'alice', ts: base }, { job_id: bob1, user_id: 'bob', ts: base }])}`);
}, 60_000);

afterAll(async () => {
  await h?.close();
  await ch?.drop();
});

async function metrics(user: string, query: string) {
  return h.app.inject({ method: 'GET', url: `/metrics/scrape?${query}`, headers: h.auth(user) });
}

const range = `from=${base - 600}&to=${base + 600}&step=60`;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe('GET /metrics/scrape', () => {
  it("answers the caller's figures per bucket, matching the facts", async () => {
    const res = await metrics('alice', range);
    expect(res.statusCode).toBe(200);
    const m = res.json();
    const mine = pages.filter((p) => p.job_id !== bob1);
    const unique = mine.filter((p, i) => !p.event_id || mine.findIndex((q) => q.event_id === p.event_id) === i);
    expect(m.range).toEqual({ from: base - 600, to: base + 600, step: 60, host: null, job_id: null });
    expect(m.t).toHaveLength(20);
    expect(sum(m.series.pages)).toBe(unique.filter((p) => p.ok === 1).length);
    expect(sum(m.series.failed)).toBe(unique.filter((p) => p.ok === 0).length);
    expect(sum(m.series.items)).toBe(aliceItems);
    expect(sum(m.series.retries)).toBe(mine.reduce((s, p) => s + Math.max(1, p.attempts) - 1, 0));
    expect(sum(m.series.bytes)).toBe(mine.reduce((s, p) => s + p.bytes, 0));
    // Bucket by bucket: minute m holds 10 + 1 fetched pages.
    const at = (t: number) => m.t.indexOf(t);
    expect(m.series.pages[at(base)]).toBe(12); // the duplicate event's extra row is absorbed; the copy "dup-1" is a distinct event id
    expect(m.series.pages[at(base + 60)]).toBe(11);
    expect(m.series.status['4xx'][at(base + 60)]).toBe(1);
    expect(m.series.status['5xx'][at(base + 60)]).toBe(1);
    expect(m.series.p50[at(base - 600)]).toBeNull();
    expect(m.series.p99[at(base + 60)]).toBeGreaterThanOrEqual(90);
    expect(m.totals).toMatchObject({ pages: 34, failed: 3, items_extracted: aliceItems, hosts: 2, jobs: 2 });
    expect(m.errors_by_kind).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'HTTP_STATUS', errors: 3 }), expect.objectContaining({ kind: 'HTTP 404', errors: 3 })]),
    );
    expect(m.errors_by_host).toEqual([expect.objectContaining({ host_name: 'news.example', errors: 6, dead_lettered: 3, fetches: 6 })]);
    expect(m.top_hosts.map((r: { host_name: string }) => r.host_name)).toEqual(['shop.example', 'news.example']);
    expect(m.top_hosts[0]).toMatchObject({ pages: 31, failed: 0 });
    expect(m.hosts).toEqual(['shop.example', 'news.example']);
    expect(Object.keys(m.timings_ms).sort()).toEqual(['errors_by_host', 'errors_by_kind', 'fetch_time', 'hosts', 'items', 'status_codes', 'status_mix', 'throughput', 'top_hosts', 'totals']);
  });

  it("shows nothing of another user's jobs, also on a host both crawled", async () => {
    const bob = (await metrics('bob', `${range}&host=shop.example`)).json();
    expect(sum(bob.series.pages)).toBe(25);
    expect(bob.totals).toMatchObject({ pages: 25, failed: 0, jobs: 1 });
    expect(bob.hosts).toEqual(['shop.example']);
    const carol = (await metrics('carol', range)).json();
    expect(sum(carol.series.pages)).toBe(0);
    expect(carol.top_hosts).toEqual([]);
    expect(carol.totals.pages).toBe(0);
  });

  it("filters by host and by one of the caller's jobs", async () => {
    const byHost = (await metrics('alice', `${range}&host=news.example`)).json();
    expect(byHost.totals).toMatchObject({ pages: 3, failed: 3 });
    const byJob = (await metrics('alice', `${range}&job_id=${alice1}`)).json();
    expect(byJob.totals).toMatchObject({ pages: 31, failed: 0, jobs: 1 });
    expect(byJob.range.job_id).toBe(alice1);
  });

  it("answers 404 for another user's job, as for an unknown one", async () => {
    for (const id of [bob1, randomUUID()]) {
      const res = await metrics('alice', `${range}&job_id=${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'JOB_NOT_FOUND', field: 'job_id' });
    }
  });

  it('refuses what is not a hostname, a UUID or a bounded integer, before any SQL is built', async () => {
    const bad = [
      "host=shop.example' OR 1=1 --",
      'host=x%5C%27',
      'host=UPPER.example',
      `job_id=${alice1}' OR ''='`,
      'job_id=1',
      'from=abc',
      'from=12',
      'step=7',
      'limit=1000',
      'user=bob',
    ];
    for (const q of bad) expect((await metrics('alice', `${range}&${q}`)).statusCode, q).toBe(400);
  });

  it('bounds the range and the number of buckets', async () => {
    const wide = await metrics('alice', `from=${now - 40 * 86_400}&to=${now}`);
    expect(wide.statusCode).toBe(400);
    expect(wide.json().error).toMatchObject({ code: 'VALIDATION_FAILED', field: 'from' });
    const fine = await metrics('alice', `from=${now - 7 * 86_400}&to=${now}&step=60`);
    expect(fine.statusCode).toBe(400);
    expect(fine.json().error.field).toBe('step');
    const backwards = await metrics('alice', `from=${now}&to=${now - 60}`);
    expect(backwards.statusCode).toBe(400);
    const auto = (await metrics('alice', `from=${now - 7 * 86_400}&to=${now}`)).json();
    expect(auto.range.step).toBe(3600);
    expect(auto.t.length).toBeLessThanOrEqual(240);
  });

  it('needs an API key', async () => {
    expect((await h.app.inject({ method: 'GET', url: `/metrics/scrape?${range}` })).statusCode).toBe(401);
    expect((await h.app.inject({ method: 'GET', url: '/me' })).statusCode).toBe(401);
    expect((await h.app.inject({ method: 'GET', url: '/me', headers: h.auth('alice') })).json()).toEqual({ user_id: 'alice' });
  });
});
