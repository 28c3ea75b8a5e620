/**
 * Dashboard latency on ≥ 1,000,000 fact rows: synthetic page fetches, items and job events are
 * generated inside ClickHouse (INSERT … SELECT FROM numbers(), deterministic hashes) in a separate
 * database, then every dashboard query is timed per scenario (a heavy user owning half the data,
 * a light one, host and job filters, fine and coarse buckets), the whole `/metrics/scrape` answer
 * is timed, and headless Chromium measures page open → every chart drawn on that data.
 *
 * `npm run bench -w @trawl/console [-- --pages 1200000 --runs 5 --keep]`; prints a table and writes
 * bench-results/dashboards.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { authHeaders, httpTarget, repoRoot } from '@trawl/streams';
import { dashboardReader } from '../src/server/clickhouse/dashboard-reader.ts';
import { loadDashboardQueries } from '../src/server/dashboards/dashboard-files.ts';
import { resolveRange } from '../src/server/dashboards/metrics-params.ts';
import { renderQuery } from '../src/server/dashboards/render-query.ts';
import { scrapeMetrics, type Panel } from '../src/server/dashboards/scrape-metrics.ts';

/** What the page asks first: the charts' panels (the tables come in a second request). */
const CHART_PANELS: readonly Panel[] = ['throughput', 'items', 'fetch_time', 'status_mix'];
import { scratchClickHouse, type ScratchClickHouse } from '../test/support/clickhouse-scratch.ts';
import { consoleHarness } from '../test/support/console-harness.ts';
import { launchBrowser } from '../test/support/browser.ts';

const { values: args } = parseArgs({
  options: { pages: { type: 'string', default: '1200000' }, items: { type: 'string', default: '1500000' }, runs: { type: 'string', default: '5' }, keep: { type: 'boolean', default: false } },
});
const PAGES = Number(args.pages);
const ITEMS = Number(args.items);
const RUNS = Number(args.runs);
const JOBS = 2000;
const HOSTS = 200;

/** Job j's id: a UUID, so the API's job filter accepts it. */
const jobIdSql = (j: string) => `concat('00000000-0000-4000-8000-', lower(hex(toUInt64(${j}) + 17592186044416)))`;
const jobId = (j: number) => `00000000-0000-4000-8000-${(j + 2 ** 44).toString(16)}`;
/** Half the jobs are u00's (the heavy user); the rest spread over u01..u19. */
const userSql = (j: string) => `if(${j} < ${JOBS / 2}, 'u00', concat('u', leftPadTwo))`;

async function generate(ch: ScratchClickHouse): Promise<void> {
  // Like the projector's: rows in Kafka order, 12 partitions, time rising with the offset (facts
  // arrive as they happen), spread evenly over the last 7 days.
  // Status mix: 85% 200, 5% 301, 5% 404, 3% 503 (dead-lettered), 2% no answer (dead-lettered).
  // Hosts skewed (cubic) over 200; fetch time log-uniform 20 ms … ~1.1 s; 5% of fetches retried once.
  await ch.exec(`
    INSERT INTO page_fetches
    SELECT toString(generateUUIDv4()), ${jobIdSql('j')}, toString(generateUUIDv4()), '',
           concat('host-', toString(hk), '.example'), concat('https://host-', toString(hk), '.example/p/', toString(number)),
           st, if(st = 0 OR st = 503, 0, 2000 + intHash64(number * 3) % 200000),
           if(st = 0 OR st = 503, 0, 20 + toUInt32(exp((intHash64(number * 5) % 1000) / 1000 * 7))),
           'http', toUInt16(intHash64(number * 7) % 4), if(st = 0 OR st = 503, 0, 1),
           multiIf(st = 0, 'TRAWL_TIMEOUT', st = 503, 'TRAWL_HTTP_STATUS', ''),
           if(st = 503, 4, if(intHash64(number * 11) % 20 = 0, 2, 1)), if(st = 200, toUInt32(intHash64(number * 13) % 10), 0),
           toDateTime(toUInt32(now()) - 7 * 86400 + intDiv(number * 7 * 86400, ${PAGES}) + intHash64(number * 17) % 30), toUInt32(number % 12), intDiv(number, 12)
    FROM (
      SELECT number, intHash64(number) % ${JOBS} AS j, intHash64(number * 19) % 100 AS r,
             multiIf(r < 85, 200, r < 90, 301, r < 95, 404, r < 98, 503, 0) AS st,
             toUInt32(pow((intHash64(number * 23) % 1000) / 1000, 3) * ${HOSTS}) AS hk
      FROM numbers(${PAGES})
    )`);
  await ch.exec(`
    INSERT INTO items
    SELECT toString(generateUUIDv4()), ${jobIdSql('j')}, toString(generateUUIDv4()), toString(generateUUIDv4()),
           concat('host-', toString(hk), '.example'), 'https://example/i',
           toDateTime(toUInt32(now()) - 7 * 86400 + intDiv(number * 7 * 86400, ${ITEMS}) + intHash64(number * 31) % 30), toUInt32(number % 12), intDiv(number, 12)
    FROM (SELECT number, intHash64(number * 29) % ${JOBS} AS j, toUInt32(pow((intHash64(number * 37) % 1000) / 1000, 3) * ${HOSTS}) AS hk FROM numbers(${ITEMS}))`);
  await ch.exec(`
    INSERT INTO job_events
    SELECT toString(generateUUIDv4()), ${jobIdSql('number')}, 'CrawlRequested', ${userSql('number')}, '', '', 0, 0, 0,
           toDateTime(toUInt32(now()) - 7 * 86400), 0, number
    FROM (SELECT number, substring(concat('0', toString(1 + number % 19)), -2) AS leftPadTwo FROM numbers(${JOBS}))`);
}

interface Scenario {
  readonly name: string;
  readonly user: string;
  readonly seconds: number;
  readonly step?: number;
  readonly host?: string;
  readonly job?: string;
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'heavy user, 7 days (auto step 1 h)', user: 'u00', seconds: 7 * 86400 },
  { name: 'heavy user, 24 hours (auto step 15 min)', user: 'u00', seconds: 86400 },
  { name: 'heavy user, 1 hour, 10 s buckets', user: 'u00', seconds: 3600, step: 10 },
  { name: 'heavy user, 7 days, one host', user: 'u00', seconds: 7 * 86400, host: 'host-0.example' },
  { name: 'heavy user, 7 days, one job', user: 'u00', seconds: 7 * 86400, job: jobId(7) },
  { name: 'light user, 7 days', user: 'u05', seconds: 7 * 86400 },
];

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}
const round = (x: number) => Math.round(x * 10) / 10;

const started = Date.now();
const loadAtStart = round(loadavg()[0]!);
const ch = await scratchClickHouse('bench_dash');
// The synthetic database goes whatever happens (unless --keep).
const dropOnFailure = (err: unknown) => {
  void (args.keep ? Promise.resolve() : ch.drop()).finally(() => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
};
process.on('uncaughtException', dropOnFailure);
process.on('unhandledRejection', dropOnFailure);
process.stderr.write(`database ${ch.database}: generating ${PAGES} page facts, ${ITEMS} items, ${JOBS} jobs …\n`);
const genStarted = Date.now();
await generate(ch);
const generateMs = Date.now() - genStarted;
const [counts] = await ch.rows<{ pages: string; items: string; jobs: string; heavy: string }>(
  `SELECT count() AS pages, (SELECT count() FROM items) AS items, (SELECT count() FROM job_events) AS jobs,
          (SELECT count() FROM page_fetches WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id = 'u00')) AS heavy FROM page_fetches`,
);
process.stderr.write(`generated in ${generateMs} ms: ${JSON.stringify(counts)}\n`);

const reader = dashboardReader({ url: ch.url, database: ch.database });
const queries = loadDashboardQueries();
const now = Math.floor(Date.now() / 1000);
const results: Record<string, unknown>[] = [];
for (const sc of SCENARIOS) {
  const range = resolveRange({ from: now - sc.seconds, to: now, ...(sc.step ? { step: sc.step } : {}), ...(sc.host ? { host: sc.host } : {}), ...(sc.job ? { job_id: sc.job } : {}) }, now);
  const perQuery: Record<string, { p50_ms: number; max_ms: number }> = {};
  for (const q of queries.values()) {
    const sql = renderQuery(q.template, { ...range, user: sc.user });
    await reader.rows(sql).catch(() => undefined); // warm-up: first read of the columns from disk
    const times: number[] = [];
    let failures = 0;
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      // A query over max_execution_time fails as it would for a user: counted, not fatal.
      if (await reader.rows(sql).then(() => true, () => false)) times.push(performance.now() - t0);
      else failures++;
    }
    perQuery[q.name] = times.length ? { p50_ms: round(percentile(times, 0.5)), max_ms: round(Math.max(...times)), ...(failures ? { failures } : {}) } : { p50_ms: NaN, max_ms: NaN, failures };
  }
  // The whole answer (ten queries side by side, as the route runs them), and the charts' part alone.
  const whole: number[] = [];
  const charts: number[] = [];
  let totals: Record<string, number | null> = {};
  let answerFailures = 0;
  for (let i = 0; i < RUNS; i++) {
    try {
      let t0 = performance.now();
      const m = await scrapeMetrics(reader, queries, range, sc.user);
      whole.push(performance.now() - t0);
      totals = m.totals;
      t0 = performance.now();
      await scrapeMetrics(reader, queries, range, sc.user, CHART_PANELS);
      charts.push(performance.now() - t0);
    } catch {
      answerFailures++;
    }
  }
  results.push({
    scenario: sc.name,
    user: sc.user,
    step: range.step,
    buckets: (range.to - range.from) / range.step,
    rows_in_scope: (totals.pages ?? 0) + (totals.failed ?? 0),
    charts_answer_p50_ms: round(percentile(charts, 0.5)),
    whole_answer_p50_ms: round(percentile(whole, 0.5)),
    whole_answer_max_ms: round(Math.max(...whole)),
    ...(answerFailures ? { answer_failures: answerFailures } : {}),
    queries: perQuery,
  });
  process.stderr.write(`  ${sc.name}: charts ${round(percentile(charts, 0.5))} ms, whole answer ${round(percentile(whole, 0.5))} ms (p50)\n`);
}

// Page open → charts drawn, in Chromium, on this data (the plugin on a test app; user u00, 7 days).
const h = await consoleHarness({ clickhouse: { url: ch.url, database: ch.database } });
const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
const browser = await launchBrowser();
const pageRuns: { charts_drawn_ms: number; wall_ms: number; request_ms: number }[] = [];
try {
  for (let i = 0; i < 4; i++) {
    const page = await browser.newPage();
    await page.evaluateOnNewDocument(() => localStorage.setItem('trawl.apiKey', 't-u00'));
    const t0 = Date.now();
    await page.goto(`${address}/#/metrics?range=7d&refresh=0`);
    await page.waitForSelector('body[data-charts-drawn]', { timeout: 60_000 });
    const wall = Date.now() - t0;
    const m = await page.evaluate(() => (window as unknown as { __trawlMetrics: { chartsDrawnMs: number; lastRequestMs: number } }).__trawlMetrics);
    if (i > 0) pageRuns.push({ charts_drawn_ms: m.chartsDrawnMs, wall_ms: wall, request_ms: m.lastRequestMs }); // the first run builds the bundle
    await page.close();
  }
} finally {
  await browser.close();
  await h.close();
}
if (!args.keep) await ch.drop();

const report = {
  bench: 'dashboards',
  at: new Date().toISOString(),
  clickhouse: (await fetch(`${httpTarget(ch.url).url.replace(/\/$/, '')}/?query=SELECT%20version()`, { headers: authHeaders(ch.url) }).then((r) => r.text())).trim(),
  // The machine is shared: its load says how much of these figures is waiting for a core.
  machine: { cores: availableParallelism(), load_average_1m_at_start: loadAtStart, load_average_1m_at_end: round(loadavg()[0]!) },
  data: { page_fetches: Number(counts!.pages), items: Number(counts!.items), jobs: Number(counts!.jobs), heavy_user_page_rows: Number(counts!.heavy), generate_ms: generateMs },
  runs_per_query: RUNS,
  scenarios: results,
  page_open_to_charts_drawn: {
    what: 'heavy user, last 7 days, fresh tab: navigation start → every chart drawn (in-page performance.now), and the wall time seen by the test',
    runs: pageRuns,
    p50_ms: percentile(pageRuns.map((r) => r.charts_drawn_ms), 0.5),
  },
  took_ms: Date.now() - started,
};

const cell = (s: string, n: number) => s.padEnd(n).slice(0, n);
process.stdout.write(`\nDashboard queries on ${report.data.page_fetches.toLocaleString('en')} page facts + ${report.data.items.toLocaleString('en')} items (ClickHouse ${report.clickhouse}), p50 of ${RUNS} runs, ms\n\n`);
const names = [...queries.keys()];
process.stdout.write(`${cell('scenario', 42)} ${cell('rows', 8)} ${names.map((n) => cell(n, 9)).join(' ')} ${cell('charts', 8)} ${cell('all', 8)}\n`);
for (const r of results as { scenario: string; rows_in_scope: number; charts_answer_p50_ms: number; whole_answer_p50_ms: number; queries: Record<string, { p50_ms: number }> }[]) {
  process.stdout.write(
    `${cell(r.scenario, 42)} ${cell(String(r.rows_in_scope), 8)} ${names.map((n) => cell(String(r.queries[n]!.p50_ms), 9)).join(' ')} ${cell(String(r.charts_answer_p50_ms), 8)} ${cell(String(r.whole_answer_p50_ms), 8)}\n`,
  );
}
process.stdout.write('(charts: the four chart panels side by side, what the page waits for; all: the ten)\n');
process.stdout.write(`\nPage open → charts drawn (heavy user, 7 days): p50 ${report.page_open_to_charts_drawn.p50_ms} ms over ${pageRuns.length} runs (${pageRuns.map((r) => r.charts_drawn_ms).join(', ')})\n`);
mkdirSync(join(repoRoot, 'bench-results'), { recursive: true });
const out = join(repoRoot, 'bench-results', 'dashboards.json');
writeFileSync(out, JSON.stringify(report, null, 2));
process.stdout.write(`${JSON.stringify({ bench: 'dashboards', page_fetches: report.data.page_fetches, page_p50_ms: report.page_open_to_charts_drawn.p50_ms })}\nwrote ${out}\n`);
await reader.close();
